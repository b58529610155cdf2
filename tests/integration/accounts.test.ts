import { describe, expect, test } from 'bun:test';
import { DEFAULT_PLANS } from '../../core/plans/plans.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { expectStandardError, memberWithToken, UUID } from './helpers.ts';

/**
 * Workspaces (spec 2.3, 4.2) and plan headroom (`GET /v3/summary`). The service runs with the
 * FREE quotas overridden by configuration, so the summary must show the configured numbers
 * (the defaults are 1 connection and 1000 messages).
 */

const FREE_MESSAGES = 5;
const FREE_CONNECTIONS = 2;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const service = useTestService({ env: { PLAN_FREE_MESSAGES: String(FREE_MESSAGES), PLAN_FREE_CONNECTIONS: String(FREE_CONNECTIONS) } });
const owner = useOwner(service, { workspace: 'Acme Support' });

describe('GET /v3/accounts', () => {
  test('lists the personal and the shared workspace as items of spec 2.3', async () => {
    // Spec 4.2: "GET | /v3/accounts | none | array of workspace items (2.3)"
    // Spec 2.3: "id | UUID string", "name | string", "isPersonal | boolean", "roles | array of role names (`OWNER` seen ...)", "helpdeskEnabled | boolean"
    const res = await service.call('GET', '/v3/accounts', { apikey: owner.token });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body).toHaveLength(2);
    for (const w of res.body) {
      expect(w.id).toMatch(UUID);
      expect(typeof w.name).toBe('string');
      expect(typeof w.isPersonal).toBe('boolean');
      expect(typeof w.helpdeskEnabled).toBe('boolean');
      expect(w.roles).toEqual(['OWNER']);
    }
    const personal = res.body.filter((w: { isPersonal: boolean }) => w.isPersonal);
    expect(personal).toHaveLength(1);
    expect(personal[0].id).not.toBe(owner.workspaceId);
    const shared = res.body.find((w: { id: string }) => w.id === owner.workspaceId);
    // Every plugin is loaded here: the helpdesk works for the workspace, so it reads true (issue 20, item 17).
    expect(shared).toMatchObject({ name: 'Acme Support', isPersonal: false, roles: ['OWNER'], helpdeskEnabled: true });
  });

  test("a member sees the workspace with their own roles, and not the Owner's personal one", async () => {
    // Spec 2.3: "roles | array of role names"; spec 5.2: workspaces "the caller belongs to".
    const agent = await memberWithToken(service, owner, 'AGENT');
    const res = await service.call('GET', '/v3/accounts', { apikey: agent.token });
    expect(res.status).toBe(200);
    const ids = res.body.map((w: { id: string }) => w.id);
    expect(ids).toContain(owner.workspaceId);
    expect(res.body.find((w: { id: string }) => w.id === owner.workspaceId).roles).toEqual(['AGENT']);
    // Their own personal workspace plus the shared one; nothing of the Owner's.
    expect(res.body).toHaveLength(2);
    expect(res.body.filter((w: { isPersonal: boolean }) => w.isPersonal)).toHaveLength(1);
    const ownerAccounts = await service.call('GET', '/v3/accounts', { apikey: owner.token });
    const ownerPersonal = ownerAccounts.body.find((w: { isPersonal: boolean }) => w.isPersonal).id;
    expect(ids).not.toContain(ownerPersonal);
  });
});

describe('PATCH /v3/accounts/{id}', () => {
  test('the Owner renames the workspace', async () => {
    // Spec 2.14: "Update the workspace | yes | no | no | no"
    const res = await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: owner.token, body: { name: 'Acme Renamed' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: owner.workspaceId, name: 'Acme Renamed', isPersonal: false, roles: ['OWNER'] });
    const list = await service.call('GET', '/v3/accounts', { apikey: owner.token });
    expect(list.body.find((w: { id: string }) => w.id === owner.workspaceId).name).toBe('Acme Renamed');
  });

  test('an Admin (or anyone below the Owner) gets 403 and nothing changes', async () => {
    // Spec 2.14: "Update the workspace | yes | no | no | no"; spec 7.2: "role denied | Insufficient account permissions | 403"
    for (const role of ['ADMIN', 'MANAGER', 'AGENT'] as const) {
      const member = await memberWithToken(service, owner, role);
      const res = await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: member.token, body: { name: `renamed by ${role}` } });
      expectStandardError(res, 403, 'Forbidden');
      expect(res.body.message).toBe('Insufficient account permissions');
    }
    const list = await service.call('GET', '/v3/accounts', { apikey: owner.token });
    expect(list.body.find((w: { id: string }) => w.id === owner.workspaceId).name).toBe('Acme Renamed');
  });

  test('an empty name is 400', async () => {
    // Spec 7.1: "400 | Malformed request or rejected by a business rule."
    expectStandardError(await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: owner.token, body: { name: '' } }), 400, 'Bad Request');
    expectStandardError(await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: owner.token, body: { name: '   ' } }), 400, 'Bad Request');
  });

  test("another person's workspace is 404 and unchanged", async () => {
    // Spec 7.1: "404 | Does not exist or is not visible to the caller."
    const stranger = await service.bootstrap({ workspace: 'Not yours' });
    const res = await service.call('PATCH', `/v3/accounts/${stranger.workspaceId}`, { apikey: owner.token, body: { name: 'taken over' } });
    expectStandardError(res, 404, 'Not Found');
    const theirs = await service.call('GET', '/v3/accounts', { apikey: stranger.token });
    expect(theirs.body.find((w: { id: string }) => w.id === stranger.workspaceId).name).toBe('Not yours');
  });
});

describe('GET /v3/summary', () => {
  test('shows the plan headroom with the configured FREE quotas', async () => {
    // Spec 4.2: "GET | /v3/summary | none | plan headroom; shape not shown beyond its purpose"
    // (the quotas come from PLAN_FREE_MESSAGES / PLAN_FREE_CONNECTIONS, not hard-coded defaults)
    const res = await service.call('GET', '/v3/summary', { apikey: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      workspaceId: owner.workspaceId,
      plan: 'FREE',
      connections: { limit: FREE_CONNECTIONS, used: 0, remaining: FREE_CONNECTIONS },
      messages: { limit: FREE_MESSAGES, available: FREE_MESSAGES, reserved: 0, consumed: 0 },
      features: { officialConnections: false, helpdeskWrite: false },
    });
    // Spec 2.1: "Timestamps in and out | ISO 8601 in UTC with milliseconds".
    const { periodStart, periodEnd } = res.body.messages;
    expect(periodStart).toMatch(ISO_MS);
    expect(periodEnd).toMatch(ISO_MS);
    // A calendar month (UTC) that contains now.
    const start = new Date(periodStart);
    const end = new Date(periodEnd);
    expect(start.getUTCDate()).toBe(1);
    expect(start.getUTCHours()).toBe(0);
    expect(end.getTime()).toBe(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    expect(start.getTime()).toBeLessThanOrEqual(Date.now());
    expect(end.getTime()).toBeGreaterThan(Date.now());
  });

  test('a PRO workspace shows the PRO quotas and features', async () => {
    // Spec 5.4 (plan requirements) and 4.2 summary: the plan decides the headroom.
    const pro = await service.bootstrap({ plan: 'PRO' });
    const res = await service.call('GET', '/v3/summary', { apikey: pro.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      workspaceId: pro.workspaceId,
      plan: 'PRO',
      connections: { limit: DEFAULT_PLANS.PRO.connections, used: 0, remaining: DEFAULT_PLANS.PRO.connections },
      messages: { limit: DEFAULT_PLANS.PRO.messagesPerMonth, available: DEFAULT_PLANS.PRO.messagesPerMonth },
      features: { officialConnections: true, helpdeskWrite: true },
    });
    // The FREE override does not leak into PRO.
    expect(res.body.messages.limit).not.toBe(FREE_MESSAGES);
    const accounts = await service.call('GET', '/v3/accounts', { apikey: pro.token });
    expect(accounts.body.find((w: { id: string }) => w.id === pro.workspaceId).plan).toBe('PRO');
  });

  test('every member may read it (spec 2.14: "Read the workspace | yes | yes | yes | yes")', async () => {
    const agent = await memberWithToken(service, owner, 'AGENT');
    const res = await service.call('GET', '/v3/summary', { apikey: agent.token });
    expect(res.status).toBe(200);
    expect(res.body.workspaceId).toBe(owner.workspaceId);
  });
});
