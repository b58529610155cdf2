import { beforeAll, describe, expect, test } from 'bun:test';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates, type TemplateSimulator } from '../support/graph-simulator-templates.ts';
import { utilityTemplate } from '../support/template-definitions.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService } from '../support/service.ts';
import { connectionInbox, conversationOfContact, eventually, helpdeskEvents, messageWhen, sentToContact, useHelpdeskWorkspace, withoutAutoAssignment } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * An agent writes first (issue 23 item 1): `POST /v3/helpdesk/conversations` opens (or reuses)
 * the contact's conversation and sends the first message through the reply path; the
 * conversation shows its 24-hour send window (spec 3.4). The sandbox network stands in for an
 * unofficial connection, the Graph API simulator for an official (cloud-api) one.
 */

const sim = useGraphSimulator();
let platform: TemplateSimulator;
beforeAll(() => {
  platform = teachTemplates(sim);
});
const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const hd = useHelpdeskWorkspace(service, { connection: 'outbound line', inbox: 'Outbound', manualAssignment: true });
const { owner, agent } = hd;
let official: { connectionId: string; callbackUrl: string; inboxId: string };

beforeAll(async () => {
  const { connectionId, callbackUrl } = await officialConnection(service, sim, owner.token, 'official outbound');
  const inboxId = await connectionInbox(service, owner.token, 'Official', connectionId);
  await withoutAutoAssignment(service, owner.token, inboxId);
  official = { connectionId, callbackUrl, inboxId };
  // Templates of the business account, approved (the simulator refuses a template it does not know).
  for (const [name, body] of [['order_update', 'Your order {{1}} was updated'], ['reengage', 'Are you still there, {{1}}?']]) {
    const created = await service.call('POST', `/v3/connections/${connectionId}/templates`, { apikey: owner.token, body: utilityTemplate(name!, body!) });
    expect(created.status).toBe(201);
    await platform.approve(created.body.externalId);
  }
}, HOOK_TIMEOUT);

const start = (body: Record<string, unknown>, apikey = owner.token) => service.call('POST', '/v3/helpdesk/conversations', { apikey, body });
const get = (id: string, apikey = owner.token) => service.call('GET', `/v3/helpdesk/conversations/${id}`, { apikey });
const contactsWith = async (phone: string) => (await service.call('GET', `/v3/helpdesk/contacts?s=${phone}`, { apikey: owner.token })).body.data as any[];

describe('on an unofficial connection (sandbox)', () => {
  test('by phone: a contact is created, an OPEN conversation assigned to the caller, the text goes out; sendWindow is null', async () => {
    const res = await start({ inboxId: hd.inboxId, phone: '+55 11 95555-0001', name: 'Olga Prado', content: 'Hello Olga, about your order' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ inboxId: hd.inboxId, status: 'OPEN', assigneeUserId: owner.userId, created: true, sendWindow: null });
    expect(res.body.message).toMatchObject({ conversationId: res.body.id, direction: 'outgoing', private: false, status: 'PENDING', senderUserId: owner.userId, content: 'Hello Olga, about your order' });
    const [contact] = await contactsWith('5511955550001');
    expect(contact).toMatchObject({ id: res.body.contactId, name: 'Olga Prado', phone: '+5511955550001' });
    await sentToContact(service, owner.token, hd.connectionId, '5511955550001', 'Hello Olga, about your order');
    expect((await get(res.body.id)).body.sendWindow).toBeNull();

    const created = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.created')).filter((e) => e.conversationId === res.body.id);
    expect(created).toHaveLength(1);
    const assigned = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.assignee_changed')).filter((e) => e.conversationId === res.body.id);
    expect(assigned).toEqual([expect.objectContaining({ fromAssigneeUserId: null, toAssigneeUserId: owner.userId, actorUserId: owner.userId })]);
    const messages = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.message.created')).filter((e) => e.conversationId === res.body.id);
    expect(messages.map((e) => e.message.id)).toEqual([res.body.message.id]);
  });

  test('the contact’s unresolved conversation in the inbox is reused (created: false), not a second one', async () => {
    const first = await start({ inboxId: hd.inboxId, phone: '5511955550002', content: 'first' });
    expect(first.status).toBe(201);
    const again = await start({ inboxId: hd.inboxId, contactId: first.body.contactId, content: 'second' });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: first.body.id, created: false });
    expect(again.body.message.content).toBe('second');
    expect(await contactsWith('5511955550002')).toHaveLength(1);
    // Once resolved, writing first opens a new one.
    expect((await service.call('POST', `/v3/helpdesk/conversations/${first.body.id}/status`, { apikey: owner.token, body: { status: 'RESOLVED' } })).status).toBe(201);
    const later = await start({ inboxId: hd.inboxId, phone: '5511955550002', content: 'third' });
    expect(later.body).toMatchObject({ created: true, status: 'OPEN' });
    expect(later.body.id).not.toBe(first.body.id);
  });

  test('an Agent of the inbox starts one and holds it; an inbox they are not in is 404, as is an unknown one', async () => {
    const res = await start({ inboxId: hd.inboxId, phone: '5511955550003', content: 'from the agent' }, agent.token);
    expect(res.status).toBe(201);
    expect(res.body.assigneeUserId).toBe(agent.userId);
    expectStandardError(await start({ inboxId: official.inboxId, phone: '5511955550004', content: 'x' }, agent.token), 404, 'Not Found');
    expectStandardError(await start({ inboxId: '00000000-0000-4000-8000-000000000000', phone: '5511955550004', content: 'x' }), 404, 'Not Found');
    expect(await contactsWith('5511955550004')).toHaveLength(0);
  });

  test('with a file (workspace media by mediaId): it goes out as a media message, the text as its caption', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 250, 251, 252]);
    const media = await fetch(`${service.url}/v3/connections/${hd.connectionId}/media`, {
      method: 'POST',
      headers: { apikey: owner.token, 'content-type': 'image/png', 'x-file-name': 'label.png' },
      body: png,
    }).then((r) => r.json() as Promise<any>);
    const res = await start({ inboxId: hd.inboxId, phone: '5511955550008', content: 'Your label', attachments: [{ mediaId: media.mediaId }] });
    expect(res.status).toBe(201);
    expect(res.body.message.attachments).toEqual([expect.objectContaining({ fileName: 'label.png', mimeType: 'image/png' })]);
    const sent = await sentToContact(service, owner.token, hd.connectionId, '5511955550008', 'Your label');
    expect(sent.kind).toBe('image');
  });

  test('bad input is 400 with the rule broken; nothing is created', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ phone: '5511955550005', contactId: '00000000-0000-4000-8000-000000000000', content: 'x' }, /exactly one of contactId, phone/],
      [{ content: 'x' }, /exactly one of contactId, phone/],
      [{ phone: '5511955550005' }, /content, a template or attachments/],
      [{ phone: 'not a phone', content: 'x' }, /E\.164/],
      [{ contactId: '00000000-0000-4000-8000-000000000000', content: 'x' }, /contactId must be a contact/],
      [{ phone: '5511955550005', content: '   ' }, /content must be 1 to/],
    ];
    for (const [body, rule] of cases) {
      const res = await start({ inboxId: hd.inboxId, ...body });
      expectStandardError(res, 400, 'Bad Request');
      expect(JSON.stringify(res.body.message)).toMatch(rule);
    }
    expect(await contactsWith('5511955550005')).toHaveLength(0);
  });

  test('a template cannot go out on an unofficial connection (422) and leaves nothing behind', async () => {
    const res = await start({ inboxId: hd.inboxId, phone: '5511955550006', template: { name: 'order_update', language: 'en_US' } });
    expectStandardError(res, 422, 'Unprocessable Entity');
    expect(await contactsWith('5511955550006')).toHaveLength(0);
  });

  test('writes need the PRO plan (403 HELPDESK_PLAN_REQUIRED); the answer is documented', async () => {
    const other = await service.bootstrap({ plan: 'PRO' });
    const inbox = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: other.token, body: { name: 'API', channelType: 'API' } });
    await service.runtime.ctx.db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', other.workspaceId).execute();
    const res = await start({ inboxId: inbox.body.id, phone: '5511955550007', content: 'x' }, other.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'HELPDESK_PLAN_REQUIRED', hint: expect.any(String) });
    const doc = (await service.call('GET', '/docs/json')).body;
    const post = doc.paths['/v3/helpdesk/conversations'].post;
    expect(post.summary).toMatch(/Start a conversation/);
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['201', '400', '403', '404', '422']));
  });
});

describe('on an official connection (Graph API simulator): the 24-hour window', () => {
  const phone = '447700955501';
  test('free text to a contact who never wrote is 422 (window expired) and creates nothing; a template goes out', async () => {
    const refused = await start({ inboxId: official.inboxId, phone, content: 'cold outreach' });
    expectStandardError(refused, 422, 'Unprocessable Entity');
    expect(refused.body.message).toMatch(/window expired/i);
    expect(refused.body.message).toMatch(/template/i);
    expect(await contactsWith(phone)).toHaveLength(0);

    const template = { name: 'order_update', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: '42' }] }] };
    const res = await start({ inboxId: official.inboxId, phone, template });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ created: true, status: 'OPEN', sendWindow: { open: false, closesAt: null } });
    // Shown as the template's body with its values filled in.
    expect(res.body.message).toMatchObject({ status: 'PENDING', content: 'Your order 42 was updated' });
    const out = await eventually(async () => sim.sent.find((m) => m.body.to === phone && m.body.type === 'template'), 'the template on the simulator');
    expect(out.body.template).toMatchObject({ name: 'order_update', language: { code: 'en_US' } });
  });

  test('the contact answers: the window opens (closesAt = their message + 24 h) and free text goes out; 25 h later it is closed', async () => {
    const answer = await sim.deliverIncoming(official.callbackUrl, { from: phone, name: 'Dana', type: 'text', text: { body: 'what order?' } });
    expect(answer.status).toBe(200);
    const conversation = await conversationOfContact(service, owner.token, phone);
    const view = await eventually(async () => {
      const body = (await get(conversation.id)).body;
      return body.sendWindow?.open ? body : undefined;
    }, 'the window to open');
    const closesAt = Date.parse(view.sendWindow.closesAt);
    expect(Math.abs(closesAt - (Date.now() + 24 * 3_600_000))).toBeLessThan(120_000);

    const text = await start({ inboxId: official.inboxId, phone, content: 'Your order 42 ships today' });
    expect(text.status).toBe(201);
    expect(text.body).toMatchObject({ id: conversation.id, created: false });

    // Test-only time travel: the contact's last message is made 25 h old.
    const lastAt = new Date(Date.now() - 25 * 3_600_000);
    await service.runtime.ctx.db.updateTable('chats').set({ last_contact_message_at: lastAt }).where('connection_id', '=', official.connectionId).where('remote_jid', '=', `${phone}@s.whatsapp.net`).execute();
    const closed = (await get(conversation.id)).body.sendWindow;
    expect(closed).toEqual({ open: false, closesAt: new Date(lastAt.getTime() + 24 * 3_600_000).toISOString() });
    const late = await service.call('POST', `/v3/helpdesk/conversations/${conversation.id}/messages`, { apikey: owner.token, body: { content: 'too late' } });
    expectStandardError(late, 422, 'Unprocessable Entity');
    // A template still goes out as a reply.
    const reply = await service.call('POST', `/v3/helpdesk/conversations/${conversation.id}/messages`, { apikey: owner.token, body: { template: { name: 'reengage', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'Dana' }] }] } } });
    expect(reply.status).toBe(201);
    expect(reply.body.content).toBe('Are you still there, Dana?');
    // The list's rows stay cheap: no window there.
    const list = (await service.call('GET', `/v3/helpdesk/conversations?inboxId=${official.inboxId}`, { apikey: owner.token })).body.data as any[];
    expect(list.find((c) => c.id === conversation.id)).not.toHaveProperty('sendWindow');
  });

  test('a template the workspace does not know is shown by its name and values; the network refuses it and the reply ends FAILED', async () => {
    const template = { name: 'ghost_note', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: '77' }] }] };
    const res = await start({ inboxId: official.inboxId, phone: '447700955502', template });
    expect(res.status).toBe(201);
    expect(res.body.message.content).toBe('[ghost_note (en_US)] 77');
    const failed = await messageWhen(service, owner.token, res.body.id, res.body.message.id, (m) => m.status === 'FAILED', { what: 'the reply to fail' });
    expect(failed.externalError).toMatch(/132001/);
  });
});
