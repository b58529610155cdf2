import { beforeAll, describe, expect, test } from 'bun:test';
import { PLUGIN_EVENTS_QUEUE } from '../../adapters/postgres/repositories/event-store.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useOwner, useTestService } from '../support/service.ts';
import { connectedConnection, conversationOfContact, eventually, injectContactMessage, messagesUntil, messageWhen, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, useMember, UUID } from './helpers.ts';

/**
 * Helpdesk conversations and their messages (issue 6 items 2–4; spec 2.1, 2.11, 2.12, 3.1, 3.2,
 * 4.6, 5.4, 7.2): a sandbox contact writes on a connection bound to an inbox, a conversation
 * opens, agents work it and reply through the connection.
 */

let freeConnectionId: string;

const service = useTestService();
// These tests watch conversations from their first, unassigned state (round-robin: helpdesk-assignment).
const hd = useHelpdeskWorkspace(service, { connection: 'support line', inbox: 'Support', manualAssignment: true });
const { owner, agent } = hd;
const free = useOwner(service, { plan: 'FREE' });
const outsider = useMember(service, owner, 'AGENT');

beforeAll(async () => {
  freeConnectionId = await connectedConnection(service, free.token, 'free line');
}, HOOK_TIMEOUT);

const inject = (from: string, text: string, connection = hd.connectionId, apikey = owner.token) =>
  injectContactMessage(service, apikey, connection, { from, text, pushName: `Contact ${from.slice(-4)}` });

const conversations = (query = '', apikey = owner.token) => service.call('GET', `/v3/helpdesk/conversations${query}`, { apikey });
const messages = (id: string, query = '', apikey = owner.token) => service.call('GET', `/v3/helpdesk/conversations/${id}/messages${query}`, { apikey });
const setStatus = (id: string, body: unknown, apikey = owner.token) => service.call('POST', `/v3/helpdesk/conversations/${id}/status`, { apikey, body });

/** The conversation of the contact with this phone, once the worker has run the subscriber. */
const conversationOf = (phone: string, predicate: (c: any) => boolean = () => true, apikey = owner.token) => conversationOfContact(service, apikey, phone, predicate);

describe('incoming messages open conversations', () => {
  let first: any;

  test('a sandbox contact writes: a conversation opens (displayId 1), with the message; another contact gets displayId 2', async () => {
    expect((await inject('5511966660001', 'Hello, my order is late')).status).toBe(201);
    first = await conversationOf('5511966660001');
    expect(first).toMatchObject({ displayId: 1, inboxId: hd.inboxId, status: 'OPEN', priority: null, assigneeUserId: null, teamId: null, labels: [], aiAgentEnabled: false });
    expect(first.id).toMatch(UUID);
    const list = await messagesUntil(service, owner.token, first.id, 1);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ direction: 'incoming', private: false, content: 'Hello, my order is late', status: null, senderUserId: null });

    // The contact was created from the phone, with the push name.
    const contact = (await service.call('GET', `/v3/helpdesk/contacts/${first.contactId}`, { apikey: owner.token })).body;
    expect(contact).toMatchObject({ phone: '+5511966660001', name: 'Contact 0001' });

    expect((await inject('5511966660002', 'Hi there')).status).toBe(201);
    const second = await conversationOf('5511966660002');
    expect(second.displayId).toBe(2);

    // A second message from the first contact joins the same conversation.
    await inject('5511966660001', 'Any news?');
    const both = await messagesUntil(service, owner.token, first.id, 2);
    expect(both.map((m: any) => m.content)).toEqual(['Hello, my order is late', 'Any news?']);
    expect((await conversationOf('5511966660001')).id).toBe(first.id);

    // GET one conversation: by id, displayId in the body; never by displayId.
    const one = await service.call('GET', `/v3/helpdesk/conversations/${first.id}`, { apikey: owner.token });
    expect(one.status).toBe(200);
    expect(one.body.displayId).toBe(1);
    expectStandardError(await service.call('GET', '/v3/helpdesk/conversations/1', { apikey: owner.token }), 404, 'Not Found');
  });

  test('the agent replies: 201 PENDING at once, then SENT; a private note is stored and not sent', async () => {
    const reply = await service.call('POST', `/v3/helpdesk/conversations/${first.id}/messages`, { apikey: agent.token, body: { content: 'Checking it now' } });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ direction: 'outgoing', private: false, content: 'Checking it now', status: 'PENDING', senderUserId: agent.userId, externalError: null });
    const sent = await messageWhen(service, owner.token, first.id, reply.body.id, (m) => m.status !== 'PENDING', { what: 'the reply to leave PENDING' });
    expect(['SENT', 'DELIVERED', 'READ']).toContain(sent.status);

    // The contact sees it: the connection carried a text to the contact's chat.
    const db = service.runtime.ctx.db;
    const row = await helpdeskDb(db).selectFrom('helpdesk_messages').select('chat_message_id').where('id', '=', reply.body.id).executeTakeFirstOrThrow();
    const chat = await db.selectFrom('messages').select(['remote_jid', 'direction']).where('id', '=', row.chat_message_id!).executeTakeFirstOrThrow();
    expect(chat).toEqual({ remote_jid: '5511966660001@s.whatsapp.net', direction: 'outbound' });

    const outbound = async () => (await db.selectFrom('messages').select('id').where('connection_id', '=', hd.connectionId).where('direction', '=', 'outbound').execute()).length;
    const before = await outbound();
    const note = await service.call('POST', `/v3/helpdesk/conversations/${first.id}/messages`, { apikey: agent.token, body: { content: 'VIP customer', private: true } });
    expect(note.status).toBe(201);
    expect(note.body).toMatchObject({ private: true, status: null, content: 'VIP customer' });
    expect(await outbound()).toBe(before);
    const noteRow = await helpdeskDb(db).selectFrom('helpdesk_messages').select('chat_message_id').where('id', '=', note.body.id).executeTakeFirstOrThrow();
    expect(noteRow.chat_message_id).toBeNull();
  });

  test('aiAgentEnabled: a reply is refused with 422, a note is still fine', async () => {
    const patched = await service.call('PATCH', `/v3/helpdesk/conversations/${first.id}`, { apikey: owner.token, body: { aiAgentEnabled: true } });
    expect(patched.body.aiAgentEnabled).toBe(true);
    expectStandardError(await service.call('POST', `/v3/helpdesk/conversations/${first.id}/messages`, { apikey: agent.token, body: { content: 'hi' } }), 422, 'Unprocessable Entity');
    expect((await service.call('POST', `/v3/helpdesk/conversations/${first.id}/messages`, { apikey: agent.token, body: { content: 'note', private: true } })).status).toBe(201);
    await service.call('PATCH', `/v3/helpdesk/conversations/${first.id}`, { apikey: owner.token, body: { aiAgentEnabled: false } });
  });

  test('resolve leaves an activity message; the contact writes again: a conversation is OPEN again', async () => {
    const resolved = await setStatus(first.id, { status: 'RESOLVED' }, agent.token);
    expect(resolved.status).toBe(201);
    expect(resolved.body.status).toBe('RESOLVED');
    const list = (await messages(first.id, '?limit=100')).body;
    expect(list.at(-1)).toMatchObject({ direction: 'activity', senderUserId: agent.userId });
    expect(list.at(-1).content).toStartWith('Conversation was resolved by');
    // Resolving again is a move the table refuses.
    expectStandardError(await setStatus(first.id, { status: 'RESOLVED' }), 422, 'Unprocessable Entity');

    await inject('5511966660001', 'It arrived broken');
    const again = await conversationOf('5511966660001', (c) => c.status === 'OPEN');
    // Documented choice: a RESOLVED conversation stays resolved; the new message opens a new one.
    expect(again.id).not.toBe(first.id);
    expect(again.displayId).toBe(3);
    const newMessages = await messagesUntil(service, owner.token, again.id, 1);
    expect(newMessages[0].content).toBe('It arrived broken');
  });

  test('snooze needs a future time; a snoozed conversation reopens when the contact writes', async () => {
    const c = await conversationOf('5511966660002');
    expectStandardError(await setStatus(c.id, { status: 'SNOOZED' }), 400, 'Bad Request');
    expectStandardError(await setStatus(c.id, { status: 'SNOOZED', snoozedUntil: new Date(Date.now() - 60_000).toISOString() }), 400, 'Bad Request');
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const snoozed = await setStatus(c.id, { status: 'SNOOZED', snoozedUntil: until });
    expect(snoozed.status).toBe(201);
    expect(snoozed.body).toMatchObject({ status: 'SNOOZED', snoozedUntil: until });
    await inject('5511966660002', 'hello again');
    const reopened = await eventually(async () => {
      const res = await service.call('GET', `/v3/helpdesk/conversations/${c.id}`, { apikey: owner.token });
      return res.body.status === 'OPEN' ? res.body : undefined;
    }, 'the snoozed conversation to reopen');
    expect(reopened.snoozedUntil).toBeNull();
  });

  test('the same incoming event processed twice stores one message', async () => {
    expect((await inject('5511966660003', 'once only')).status).toBe(201);
    const c = await conversationOf('5511966660003');
    await messagesUntil(service, owner.token, c.id, 1);
    const db = service.runtime.ctx.db;
    const event = await db.selectFrom('events').select('id').where('workspace_id', '=', owner.workspaceId).where('event', '=', 'messages.upsert').orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const job = service.runtime.jobs.find((j) => j.queue === PLUGIN_EVENTS_QUEUE)!;
    await job.handle!({ eventId: event.id }, { id: 'replay', retryCount: 1 });
    await job.handle!({ eventId: event.id }, { id: 'replay', retryCount: 1 });
    const rows = await helpdeskDb(db).selectFrom('helpdesk_messages').select('id').where('conversation_id', '=', c.id).execute();
    expect(rows).toHaveLength(1);
  });

  test('a connection with no inbox opens no conversation: its messages do not even wait for the helpdesk', async () => {
    const bare = await connectedConnection(service, owner.token, 'no inbox');
    const before = (await conversations()).body.total;
    expect((await inject('5511966660009', 'nobody listens', bare)).status).toBe(201);
    // Stored (the inject answers once it is), and nothing reads it: no inbox, no campaign, no
    // webhook on the connection, so no event is written and nothing waits for the plugins.
    const db = service.runtime.ctx.db;
    expect(await db.selectFrom('messages').select('id').where('connection_id', '=', bare).execute()).toHaveLength(1);
    expect(await db.selectFrom('events').select('id').where('connection_id', '=', bare).where('event', '=', 'messages.upsert').execute()).toEqual([]);
    expect((await conversations()).body.total).toBe(before);
  });
});

describe('working a conversation', () => {
  let c: any;
  beforeAll(async () => {
    await inject('5511966660010', 'work me');
    c = await conversationOf('5511966660010');
  }, HOOK_TIMEOUT);

  test('PATCH priority, assignee (inbox member or Manager+), customAttributes', async () => {
    const res = await service.call('PATCH', `/v3/helpdesk/conversations/${c.id}`, {
      apikey: owner.token,
      body: { priority: 'URGENT', assigneeUserId: agent.userId, customAttributes: { order: 'A-1' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ priority: 'URGENT', assigneeUserId: agent.userId, customAttributes: { order: 'A-1' } });
    // The outsider agent is not a member of the inbox.
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/conversations/${c.id}`, { apikey: owner.token, body: { assigneeUserId: outsider.userId } }), 400, 'Bad Request');
    // The owner (Manager or above) may be assigned.
    expect((await service.call('PATCH', `/v3/helpdesk/conversations/${c.id}`, { apikey: owner.token, body: { assigneeUserId: owner.userId } })).body.assigneeUserId).toBe(owner.userId);
    const cleared = await service.call('PATCH', `/v3/helpdesk/conversations/${c.id}`, { apikey: owner.token, body: { priority: null, assigneeUserId: agent.userId } });
    expect(cleared.body).toMatchObject({ priority: null, assigneeUserId: agent.userId, customAttributes: { order: 'A-1' } });
    expect((await service.call('PATCH', `/v3/helpdesk/conversations/${c.id}`, { apikey: owner.token, body: { priority: 'SOON' } })).status).toBe(400);
  });

  test('fields left out keep their value: no default creeps into a PATCH', async () => {
    const patch = (body: unknown) => service.call('PATCH', `/v3/helpdesk/conversations/${c.id}`, { apikey: owner.token, body });
    expect((await patch({ priority: 'HIGH' })).body.priority).toBe('HIGH');
    const res = await patch({ customAttributes: { order: 'A-2' } });
    expect(res.body).toMatchObject({ priority: 'HIGH', assigneeUserId: agent.userId, customAttributes: { order: 'A-2' } });
    expect((await patch({ priority: null })).body.priority).toBeNull();
    expect((await patch({ aiAgentEnabled: false })).body.priority).toBeNull();
  });

  test('filters: status, inboxId, assigneeUserId', async () => {
    const mine = await conversations(`?assigneeUserId=${agent.userId}`);
    expect(mine.body.data.map((x: any) => x.id)).toEqual([c.id]);
    const open = await conversations('?status=OPEN&per_page=100');
    expect(open.body.data.every((x: any) => x.status === 'OPEN')).toBe(true);
    expect((await conversations(`?inboxId=${hd.inboxId}&per_page=100`)).body.total).toBe((await conversations('?per_page=100')).body.total);
    expect((await conversations(`?inboxId=${crypto.randomUUID()}`)).body.total).toBe(0);
    // No status filter: every status (a resolved conversation of an earlier test is there too).
    const all = await conversations('?per_page=100');
    expect(all.body.data.some((x: any) => x.status === 'RESOLVED')).toBe(true);
    expect(all.body.total).toBeGreaterThan(open.body.total);
    expectStandardError(await conversations('?status=CLOSED'), 400, 'Bad Request');
    expect(mine.body).toMatchObject({ currentPage: 1, perPage: 10, total: 1, totalPages: 1 });
  });

  test('labels are replaced and stored normalised', async () => {
    const res = await service.call('POST', `/v3/helpdesk/conversations/${c.id}/labels`, { apikey: agent.token, body: { labels: [' Billing ', 'billing', 'VIP'] } });
    expect(res.status).toBe(201);
    expect(res.body.labels).toEqual(['Billing', 'VIP']);
    expect((await service.call('GET', `/v3/helpdesk/conversations/${c.id}`, { apikey: agent.token })).body.labels).toEqual(['Billing', 'VIP']);
    expectStandardError(await service.call('POST', `/v3/helpdesk/conversations/${c.id}/labels`, { apikey: agent.token, body: { labels: ['a,b'] } }), 400, 'Bad Request');
  });

  test('read marker: the assignee reading sets assigneeLastSeenAt', async () => {
    const res = await service.call('POST', `/v3/helpdesk/conversations/${c.id}/read`, { apikey: agent.token });
    expect(res.status).toBe(201);
    expect(res.body.assigneeLastSeenAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  test('an Agent outside the inbox gets 404 on the conversation and its messages, and lists none of them', async () => {
    const opts = { apikey: outsider.token };
    expectStandardError(await service.call('GET', `/v3/helpdesk/conversations/${c.id}`, opts), 404, 'Not Found');
    expectStandardError(await messages(c.id, '', outsider.token), 404, 'Not Found');
    expectStandardError(await service.call('POST', `/v3/helpdesk/conversations/${c.id}/messages`, { ...opts, body: { content: 'x' } }), 404, 'Not Found');
    expectStandardError(await setStatus(c.id, { status: 'RESOLVED' }, outsider.token), 404, 'Not Found');
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/conversations/${c.id}`, { ...opts, body: { priority: 'LOW' } }), 404, 'Not Found');
    expect((await conversations('', outsider.token)).body.total).toBe(0);
    // The inbox's member sees it.
    expect((await service.call('GET', `/v3/helpdesk/conversations/${c.id}`, { apikey: agent.token })).status).toBe(200);
    expect((await conversations('', agent.token)).body.total).toBeGreaterThan(0);
  });
});

describe('cursor pagination of messages (spec 4.6)', () => {
  test('bare array, oldest first; cursor answers the messages before it; fewer than limit at the beginning', async () => {
    for (let i = 1; i <= 5; i++) await inject('5511966660020', `m${i}`);
    const c = await conversationOf('5511966660020');
    const all = await messagesUntil(service, owner.token, c.id, 5);
    expect(all.map((m: any) => m.content)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);

    const latest = await messages(c.id, '?limit=2');
    expect(Array.isArray(latest.body)).toBe(true);
    expect(latest.body.map((m: any) => m.content)).toEqual(['m4', 'm5']);
    const older = await messages(c.id, `?limit=2&cursor=${latest.body[0].id}`);
    expect(older.body.map((m: any) => m.content)).toEqual(['m2', 'm3']);
    const oldest = await messages(c.id, `?limit=2&cursor=${older.body[0].id}`);
    expect(oldest.body.map((m: any) => m.content)).toEqual(['m1']);
    expectStandardError(await messages(c.id, '?limit=0'), 400, 'Bad Request');
    expectStandardError(await messages(c.id, `?cursor=${crypto.randomUUID()}`), 400, 'Bad Request');
  });
});

describe('plan: writes need PRO, reads do not', () => {
  test('FREE plan: reading works, a reply is 403 HELPDESK_PLAN_REQUIRED', async () => {
    // A FREE workspace cannot create an inbox; one made while it was PRO keeps working for reads.
    const db = service.runtime.ctx.db;
    await db.updateTable('workspaces').set({ plan: 'PRO' }).where('id', '=', free.workspaceId).execute();
    const inbox = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: free.token, body: { name: 'Free', channelType: 'CONNECTION', connectionId: freeConnectionId } });
    expect(inbox.status).toBe(201);
    await db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', free.workspaceId).execute();
    await inject('5511966660030', 'free hello', freeConnectionId, free.token);
    const c = await conversationOf('5511966660030', () => true, free.token);
    expect((await messages(c.id, '', free.token)).status).toBe(200);
    const reply = await service.call('POST', `/v3/helpdesk/conversations/${c.id}/messages`, { apikey: free.token, body: { content: 'hi' } });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({ message: 'HELPDESK_PLAN_REQUIRED', hint: expect.any(String) });
    const status = await setStatus(c.id, { status: 'RESOLVED' }, free.token);
    expect(status.status).toBe(403);
    expect(status.body.message).toBe('HELPDESK_PLAN_REQUIRED');
  });
});
