import { beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { helpdeskPlugin } from '../../plugins/helpdesk/index.ts';
import { startTestService, useOwner, useTestService } from '../support/service.ts';
import { newConnection } from '../support/connections.ts';
import { expectStandardError, HOOK_TIMEOUT, useMember, UUID } from './helpers.ts';

/**
 * The helpdesk plugin's inboxes (issue 6 items 1 and 4; spec 2.10, 2.14, 4.6, 5.4, 7.1, 7.2).
 */

let connectionId: string;
let otherConnectionId: string;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const service = useTestService();
const owner = useOwner(service, { plan: 'PRO' });
const other = useOwner(service, { plan: 'PRO' });
const free = useOwner(service, { plan: 'FREE' });
const manager = useMember(service, owner, 'MANAGER');
const agent = useMember(service, owner, 'AGENT');

beforeAll(async () => {
  connectionId = await newConnection(service, owner.token, 'main line');
  otherConnectionId = await newConnection(service, other.token, 'their line');
}, HOOK_TIMEOUT);

const create = (body: unknown, apikey = owner.token) => service.call('POST', '/v3/helpdesk/inboxes', { apikey, body });
const read = (id: string, apikey = owner.token) => service.call('GET', `/v3/helpdesk/inboxes/${id}`, { apikey });

async function apiInbox(name: string, extra: Record<string, unknown> = {}, apikey = owner.token) {
  const res = await create({ name, channelType: 'API', ...extra }, apikey);
  expect(res.status).toBe(201);
  return res.body;
}

describe('creating and reading inboxes', () => {
  test('an API inbox answers inboundWebhookSecret once; later reads show it as channelConfig.hmacToken', async () => {
    const res = await create({ name: 'Support API', channelType: 'API', webhookUrl: 'https://app.example/out', hmacMandatory: true, timezone: 'America/Sao_Paulo' });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(UUID);
    expect(res.body).toMatchObject({ name: 'Support API', channelType: 'API', connectionId: null, timezone: 'America/Sao_Paulo' });
    expect(res.body.createdAt).toMatch(ISO);
    const secret = res.body.inboundWebhookSecret;
    expect(typeof secret).toBe('string');
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(res.body.channelConfig).toEqual({ webhookUrl: 'https://app.example/out', hmacMandatory: true, hmacToken: secret });

    const again = await read(res.body.id);
    expect(again.status).toBe(200);
    expect(again.body.inboundWebhookSecret).toBeUndefined();
    expect(again.body.channelConfig).toEqual({ webhookUrl: 'https://app.example/out', hmacMandatory: true, hmacToken: secret });
    // A Manager configures the helpdesk: they see the credential too.
    expect((await read(res.body.id, manager.token)).body.channelConfig.hmacToken).toBe(secret);

    // Each API inbox has its own secret, stored sealed (not as plain text).
    const second = await apiInbox('Second API');
    expect(second.inboundWebhookSecret).not.toBe(secret);
    const { rows } = await sql<{ inbound_secret: string }>`select inbound_secret from helpdesk_inboxes where id = ${res.body.id}`.execute(service.runtime.ctx.db);
    expect(rows[0]!.inbound_secret).toBeString();
    expect(rows[0]!.inbound_secret).not.toContain(secret);
  });

  test('defaults: timezone UTC, hmacMandatory false, no webhookUrl', async () => {
    const body = await apiInbox('Defaults');
    expect(body.timezone).toBe('UTC');
    expect(body.channelConfig).toMatchObject({ webhookUrl: null, hmacMandatory: false });
  });

  test('a CONNECTION inbox is bound to a connection of the workspace, one inbox per connection', async () => {
    const res = await create({ name: 'WhatsApp', channelType: 'CONNECTION', connectionId });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ channelType: 'CONNECTION', connectionId, channelConfig: null });
    expect(res.body.inboundWebhookSecret).toBeUndefined();

    const twice = await create({ name: 'Again', channelType: 'CONNECTION', connectionId });
    expectStandardError(twice, 409, 'Conflict');
  });

  test("another workspace's connection, or an unknown one, is CONNECTION_NOT_FOUND", async () => {
    for (const id of [otherConnectionId, crypto.randomUUID(), 'not-a-uuid']) {
      const res = await create({ name: 'Theirs', channelType: 'CONNECTION', connectionId: id });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'CONNECTION_NOT_FOUND', hint: expect.any(String) });
    }
  });

  test('validation: IANA timezone, http(s) webhookUrl, connectionId rules, one message per broken rule', async () => {
    const bad = await create({ name: 'Bad', channelType: 'API', timezone: 'Mars/Olympus_Mons', webhookUrl: 'ftp://x' });
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message).toHaveLength(2);
    expect(bad.body.message.some((m: string) => m.includes('timezone'))).toBe(true);
    expect(bad.body.message.some((m: string) => m.includes('webhookUrl'))).toBe(true);

    expectStandardError(await create({ name: 'No connection', channelType: 'CONNECTION' }), 400, 'Bad Request');
    expectStandardError(await create({ name: 'API + connection', channelType: 'API', connectionId }), 400, 'Bad Request');
    expectStandardError(await create({ name: 'x', channelType: 'EMAIL' }), 400, 'Bad Request');
    expectStandardError(await create({ name: '   ', channelType: 'API' }), 400, 'Bad Request');
  });

  test('GET lists the inboxes in the page envelope; `s` searches the name', async () => {
    const mine = await service.bootstrap({ plan: 'PRO' });
    for (const name of ['Sales', 'Support', 'Billing']) await apiInbox(name, {}, mine.token);
    const all = await service.call('GET', '/v3/helpdesk/inboxes?per_page=2', { apikey: mine.token });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 3, totalPages: 2, currentPage: 1, perPage: 2 });
    expect(all.body.data.map((i: any) => i.name)).toEqual(['Sales', 'Support']);
    const found = await service.call('GET', '/v3/helpdesk/inboxes?s=bill', { apikey: mine.token });
    expect(found.body.data.map((i: any) => i.name)).toEqual(['Billing']);
    // Another workspace's inboxes never show, and cannot be read.
    const theirs = await service.call('GET', '/v3/helpdesk/inboxes', { apikey: other.token });
    expect(theirs.body.total).toBe(0);
    expectStandardError(await read(all.body.data[0].id, other.token), 404, 'Not Found');
  });

  test('PATCH changes settings (kept when left out); DELETE removes the inbox', async () => {
    const inbox = await apiInbox('Patch me', { webhookUrl: 'https://a.example/x' });
    const res = await service.call('PATCH', `/v3/helpdesk/inboxes/${inbox.id}`, { apikey: owner.token, body: { name: 'Patched', timezone: 'Europe/Lisbon', hmacMandatory: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Patched', timezone: 'Europe/Lisbon', channelConfig: { webhookUrl: 'https://a.example/x', hmacMandatory: true, hmacToken: inbox.inboundWebhookSecret } });
    expect((await read(inbox.id)).body.name).toBe('Patched');
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/inboxes/${inbox.id}`, { apikey: owner.token, body: { timezone: 'Nowhere/City' } }), 400, 'Bad Request');
    const cleared = await service.call('PATCH', `/v3/helpdesk/inboxes/${inbox.id}`, { apikey: owner.token, body: { webhookUrl: null } });
    expect(cleared.body.channelConfig.webhookUrl).toBeNull();

    const gone = await service.call('DELETE', `/v3/helpdesk/inboxes/${inbox.id}`, { apikey: owner.token });
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ id: inbox.id, deleted: true });
    expectStandardError(await read(inbox.id), 404, 'Not Found');
    expectStandardError(await service.call('DELETE', `/v3/helpdesk/inboxes/${inbox.id}`, { apikey: owner.token }), 404, 'Not Found');
  });
});

describe('members and Agent visibility', () => {
  test('PUT members replaces them; GET lists them; non-members of the workspace are refused', async () => {
    const inbox = await apiInbox('Team inbox');
    const put = await service.call('PUT', `/v3/helpdesk/inboxes/${inbox.id}/members`, { apikey: owner.token, body: { userIds: [agent.userId, manager.userId, agent.userId] } });
    expect(put.status).toBe(200);
    expect(put.body.data.map((m: any) => m.userId).sort()).toEqual([agent.userId, manager.userId].sort());
    expect(put.body.data.find((m: any) => m.userId === agent.userId).email).toBe(agent.email);

    const get = await service.call('GET', `/v3/helpdesk/inboxes/${inbox.id}/members`, { apikey: owner.token });
    expect(get.body).toEqual(put.body);

    const replaced = await service.call('PUT', `/v3/helpdesk/inboxes/${inbox.id}/members`, { apikey: owner.token, body: { userIds: [manager.userId] } });
    expect(replaced.body.data.map((m: any) => m.userId)).toEqual([manager.userId]);

    const stranger = await service.call('PUT', `/v3/helpdesk/inboxes/${inbox.id}/members`, { apikey: owner.token, body: { userIds: [other.userId] } });
    expectStandardError(stranger, 400, 'Bad Request');
    expect((await service.call('GET', `/v3/helpdesk/inboxes/${inbox.id}/members`, { apikey: owner.token })).body.data.map((m: any) => m.userId)).toEqual([manager.userId]);
  });

  test('an Agent sees only the inboxes they belong to, and gets 404 (never 403) for the others', async () => {
    const theirs = await apiInbox('Agent inbox');
    const hidden = await apiInbox('Hidden inbox');
    await service.call('PUT', `/v3/helpdesk/inboxes/${theirs.id}/members`, { apikey: owner.token, body: { userIds: [agent.userId] } });

    const list = await service.call('GET', '/v3/helpdesk/inboxes?per_page=100', { apikey: agent.token });
    expect(list.status).toBe(200);
    const ids = list.body.data.map((i: any) => i.id);
    expect(ids).toContain(theirs.id);
    expect(ids).not.toContain(hidden.id);
    expect(list.body.total).toBe(ids.length);

    // Their inbox reads, without the inbound credential (only Owners, Admins and Managers see it).
    const mine = await read(theirs.id, agent.token);
    expect(mine.status).toBe(200);
    expect(mine.body.channelConfig).toEqual({ webhookUrl: null, hmacMandatory: false });
    expect(list.body.data.find((i: any) => i.id === theirs.id).channelConfig.hmacToken).toBeUndefined();
    expect((await service.call('GET', `/v3/helpdesk/inboxes/${theirs.id}/members`, { apikey: agent.token })).status).toBe(200);

    // Everywhere else: 404, reads and writes alike.
    expectStandardError(await read(hidden.id, agent.token), 404, 'Not Found');
    expectStandardError(await service.call('GET', `/v3/helpdesk/inboxes/${hidden.id}/members`, { apikey: agent.token }), 404, 'Not Found');
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/inboxes/${hidden.id}`, { apikey: agent.token, body: { name: 'x' } }), 404, 'Not Found');
    expectStandardError(await service.call('DELETE', `/v3/helpdesk/inboxes/${hidden.id}`, { apikey: agent.token }), 404, 'Not Found');
    expectStandardError(await service.call('PUT', `/v3/helpdesk/inboxes/${hidden.id}/members`, { apikey: agent.token, body: { userIds: [agent.userId] } }), 404, 'Not Found');

    // A Manager sees every inbox of the workspace.
    const managerList = await service.call('GET', '/v3/helpdesk/inboxes?per_page=100', { apikey: manager.token });
    expect(managerList.body.data.map((i: any) => i.id)).toEqual(expect.arrayContaining([theirs.id, hidden.id]));
  });

  test('an Agent cannot configure inboxes (roles matrix: "Helpdesk: configure")', async () => {
    const theirs = await apiInbox('Agent configures?');
    await service.call('PUT', `/v3/helpdesk/inboxes/${theirs.id}/members`, { apikey: owner.token, body: { userIds: [agent.userId] } });
    expectStandardError(await create({ name: 'By agent', channelType: 'API' }, agent.token), 403, 'Forbidden');
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/inboxes/${theirs.id}`, { apikey: agent.token, body: { name: 'x' } }), 403, 'Forbidden');
    expectStandardError(await service.call('DELETE', `/v3/helpdesk/inboxes/${theirs.id}`, { apikey: agent.token }), 403, 'Forbidden');
    expect((await read(theirs.id)).body.name).toBe('Agent configures?');
    // A Manager may.
    expect((await create({ name: 'By manager', channelType: 'API' }, manager.token)).status).toBe(201);
  });
});

describe('plan: helpdesk writes need PRO, reads do not', () => {
  const planRequired = (res: { status: number; body: any }) => {
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'HELPDESK_PLAN_REQUIRED', hint: 'The helpdesk is available on the PRO plan' });
  };

  test('a FREE workspace is refused every inbox write with 403 HELPDESK_PLAN_REQUIRED, and reads work', async () => {
    planRequired(await create({ name: 'Free API', channelType: 'API' }, free.token));
    const freeConnection = await newConnection(service, free.token, 'free line');
    planRequired(await create({ name: 'Free conn', channelType: 'CONNECTION', connectionId: freeConnection }, free.token));

    const list = await service.call('GET', '/v3/helpdesk/inboxes', { apikey: free.token });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ data: [], total: 0 });

    // An inbox made while the workspace was PRO stays readable after a downgrade; writes stop.
    const ws = await service.bootstrap({ plan: 'PRO' });
    const inbox = await apiInbox('Before downgrade', {}, ws.token);
    await service.runtime.ctx.db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', ws.workspaceId).execute();
    expect((await read(inbox.id, ws.token)).status).toBe(200);
    expect((await service.call('GET', `/v3/helpdesk/inboxes/${inbox.id}/members`, { apikey: ws.token })).status).toBe(200);
    planRequired(await service.call('PATCH', `/v3/helpdesk/inboxes/${inbox.id}`, { apikey: ws.token, body: { name: 'x' } }));
    planRequired(await service.call('PUT', `/v3/helpdesk/inboxes/${inbox.id}/members`, { apikey: ws.token, body: { userIds: [] } }));
    planRequired(await service.call('DELETE', `/v3/helpdesk/inboxes/${inbox.id}`, { apikey: ws.token }));
    expect((await read(inbox.id, ws.token)).body.name).toBe('Before downgrade');
  });
});

describe('the plugin switch', () => {
  test('the helpdesk loads by default', () => {
    expect(service.runtime.plugins.map((p) => p.name)).toContain('helpdesk');
  });

  test('without helpdesk in PLUGINS, its routes answer 404 and its tables are not made', async () => {
    const off = await startTestService({ env: { PLUGINS: '' }, plugins: [helpdeskPlugin] });
    try {
      expect(off.runtime.plugins).toEqual([]);
      const boss = await off.bootstrap({ plan: 'PRO' });
      expectStandardError(await off.call('GET', '/v3/helpdesk/inboxes', { apikey: boss.token }), 404, 'Not Found');
      expectStandardError(await off.call('POST', '/v3/helpdesk/inboxes', { apikey: boss.token, body: { name: 'x', channelType: 'API' } }), 404, 'Not Found');
      expectStandardError(await off.call('GET', '/v3/helpdesk/contacts', { apikey: boss.token }), 404, 'Not Found');
      const { rows } = await sql<{ found: string | null }>`select to_regclass('helpdesk_inboxes')::text as found`.execute(off.runtime.ctx.db);
      expect(rows[0]?.found ?? null).toBeNull();
    } finally {
      await off.stop();
    }
  }, HOOK_TIMEOUT);
});
