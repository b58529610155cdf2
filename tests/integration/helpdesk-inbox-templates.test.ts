import { beforeAll, describe, expect, test } from 'bun:test';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates, type TemplateSimulator } from '../support/graph-simulator-templates.ts';
import { utilityTemplate } from '../support/template-definitions.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService } from '../support/service.ts';
import { connectionInbox, eventually, setInboxMembers, useHelpdeskWorkspace, withoutAutoAssignment } from '../support/helpdesk.ts';
import { templateSendComponents } from '../../core/templates/template-fields.ts';
import { expectStandardError, HOOK_TIMEOUT, useMember } from './helpers.ts';

/**
 * Issue 23: the templates a member who works an inbox can send from it,
 * `GET /v3/helpdesk/inboxes/{id}/templates`. Agents may not read connections (the roles matrix),
 * yet spec 3.4 leaves them only "a pre-approved template" once the window is closed ("Free text
 * is refused with 422; only a pre-approved template may be sent"), so working the inbox is
 * enough to read them. Spec 3.5: "Creation returns `PENDING`; polling … reaches `APPROVED`":
 * only APPROVED ones are offered. The Graph API simulator stands in for the official platform.
 */

const sim = useGraphSimulator();
let platform: TemplateSimulator;
beforeAll(() => {
  platform = teachTemplates(sim);
});
const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
// The sandbox inbox, its Agent a member of it only.
const hd = useHelpdeskWorkspace(service, { connection: 'sandbox line', inbox: 'Sandbox', manualAssignment: true });
const { owner, agent } = hd;
const officialAgent = useMember(service, owner, 'AGENT');
let official: { connectionId: string; inboxId: string; pendingId: string };

beforeAll(async () => {
  const { connectionId } = await officialConnection(service, sim, owner.token, 'official line');
  const inboxId = await connectionInbox(service, owner.token, 'Official', connectionId);
  await withoutAutoAssignment(service, owner.token, inboxId);
  await setInboxMembers(service, owner.token, inboxId, [officialAgent.userId]);
  const created = await service.call('POST', `/v3/connections/${connectionId}/templates`, { apikey: owner.token, body: utilityTemplate('order_update', 'Your order {{1}} was updated') });
  expect(created.status).toBe(201);
  await platform.approve(created.body.externalId);
  const pending = await service.call('POST', `/v3/connections/${connectionId}/templates`, { apikey: owner.token, body: utilityTemplate('not_yet', 'Pending {{1}}') });
  expect(pending.status).toBe(201);
  // Made in the platform's own manager: found by the inbox's read, with a text header and a link button to fill.
  platform.addElsewhere({
    name: 'delivery_slot',
    language: 'pt_BR',
    category: 'UTILITY',
    status: 'APPROVED',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Entrega {{1}}', example: { header_text: ['#77'] } },
      { type: 'BODY', text: 'Olá {{1}}, sua entrega chega {{2}}.', example: { body_text: [['Ana', 'amanhã']] } },
      { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'OK' }, { type: 'URL', text: 'Acompanhar', url: 'https://shop.example/track/{{1}}', example: ['abc'] }] },
    ],
  });
  platform.addElsewhere({ name: 'refused_one', language: 'en_US', category: 'MARKETING', status: 'REJECTED', components: [{ type: 'BODY', text: 'Buy now' }] });
  official = { connectionId, inboxId, pendingId: pending.body.externalId };
}, HOOK_TIMEOUT);

const templatesOf = (inboxId: string, apikey = owner.token) => service.call('GET', `/v3/helpdesk/inboxes/${inboxId}/templates`, { apikey });

describe('GET /v3/helpdesk/inboxes/{id}/templates', () => {
  test('an official inbox answers its connection’s APPROVED templates, with the fields a send must fill', async () => {
    const res = await templatesOf(official.inboxId);
    expect(res.status).toBe(200);
    expect(res.body.official).toBe(true);
    const data = res.body.data as any[];
    // Sorted by name; PENDING and REJECTED ones are not offered.
    expect(data.map((t) => [t.name, t.language])).toEqual([
      ['delivery_slot', 'pt_BR'],
      ['order_update', 'en_US'],
    ]);
    const [slot, order] = data;
    expect(order).toMatchObject({ category: 'UTILITY', body: 'Your order {{1}} was updated', fillable: true });
    expect(order.fields).toEqual([{ component: 'body', variable: 1, index: null, subType: null, type: 'text', label: 'Body {{1}}', example: '42' }]);
    expect(slot.body).toBe('Olá {{1}}, sua entrega chega {{2}}.');
    expect(slot.components).toHaveLength(3);
    expect(slot.fields.map((f: any) => [f.component, f.variable, f.index, f.subType, f.type, f.example])).toEqual([
      ['header', 1, null, null, 'text', '#77'],
      ['body', 1, null, null, 'text', 'Ana'],
      ['body', 2, null, null, 'text', 'amanhã'],
      ['button', null, 1, 'url', 'text', 'abc'],
    ]);
  });

  test('a template approved on the platform is offered at the next read (the platform is read first)', async () => {
    platform.setStatus(official.pendingId, 'APPROVED');
    const names = ((await templatesOf(official.inboxId)).body.data as any[]).map((t) => t.name);
    expect(names).toContain('not_yet');
  });

  test('the fields build a send the template accepts: it goes out from a closed window', async () => {
    const slot = ((await templatesOf(official.inboxId)).body.data as any[]).find((t) => t.name === 'delivery_slot');
    const components = templateSendComponents(slot.fields, ['#12', 'Bruno', 'hoje', 'x9']);
    const res = await service.call('POST', '/v3/helpdesk/conversations', {
      apikey: officialAgent.token,
      body: { inboxId: official.inboxId, phone: '447700966601', template: { name: 'delivery_slot', language: 'pt_BR', components } },
    });
    expect(res.status).toBe(201);
    expect(res.body.message.content).toBe('Olá Bruno, sua entrega chega hoje.');
    const out = await eventually(async () => sim.sent.find((m) => m.body.to === '447700966601' && m.body.type === 'template'), 'the template on the simulator');
    expect(out.body.template.components).toEqual(components);
  });

  test('an inbox on a network without templates answers an empty list: sandbox, API', async () => {
    const sandbox = await templatesOf(hd.inboxId);
    expect(sandbox.status).toBe(200);
    expect(sandbox.body).toEqual({ official: false, data: [] });
    const api = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: owner.token, body: { name: 'App', channelType: 'API' } });
    expect((await templatesOf(api.body.id)).body).toEqual({ official: false, data: [] });
  });

  test('roles: an Agent of the inbox reads them; an Agent of another inbox gets 404, as every inbox route answers them', async () => {
    const mine = await templatesOf(official.inboxId, officialAgent.token);
    expect(mine.status).toBe(200);
    expect((mine.body.data as any[]).length).toBeGreaterThanOrEqual(2);
    // The Agent works the sandbox inbox only: the official one does not exist for them.
    expectStandardError(await templatesOf(official.inboxId, agent.token), 404, 'Not Found');
    expectStandardError(await service.call('GET', `/v3/helpdesk/inboxes/${official.inboxId}`, { apikey: agent.token }), 404, 'Not Found');
    // Yet they cannot read the connection's own list (connections are closed to Agents).
    expect((await service.call('GET', `/v3/connections/${official.connectionId}/templates`, { apikey: officialAgent.token })).status).toBe(403);
  });

  test('another workspace’s inbox and an unknown or malformed id are 404', async () => {
    const other = await service.bootstrap({ plan: 'PRO' });
    expectStandardError(await templatesOf(official.inboxId, other.token), 404, 'Not Found');
    expectStandardError(await templatesOf('00000000-0000-4000-8000-000000000000'), 404, 'Not Found');
    expectStandardError(await templatesOf('not-an-id'), 404, 'Not Found');
  });

  test('reading needs no PRO plan; the route is in the OpenAPI document', async () => {
    await service.runtime.ctx.db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', owner.workspaceId).execute();
    try {
      expect((await templatesOf(official.inboxId)).status).toBe(200);
    } finally {
      await service.runtime.ctx.db.updateTable('workspaces').set({ plan: 'PRO' }).where('id', '=', owner.workspaceId).execute();
    }
    const doc = (await service.call('GET', '/docs/json')).body;
    const get = doc.paths['/v3/helpdesk/inboxes/{id}/templates'].get;
    expect(get.summary).toMatch(/APPROVED templates/);
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '401', '404']));
  });

  // Last: it deletes the official connection.
  test('once its connection is deleted the inbox offers nothing (the templates went with it)', async () => {
    expect((await service.call('DELETE', `/v3/connections/${official.connectionId}`, { apikey: owner.token })).status).toBe(200);
    const res = await templatesOf(official.inboxId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ official: false, data: [] });
  });
});
