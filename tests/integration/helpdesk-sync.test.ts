import { beforeAll, describe, expect, test } from 'bun:test';
import { PLUGIN_EVENTS_QUEUE } from '../../adapters/postgres/repositories/event-store.ts';
import { INBOX_SYNC_QUEUE } from '../../core/helpdesk/inboxes/inbox-sync.ts';
import { inboxSyncTuning } from '../../plugins/helpdesk/sync/job.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useTestService } from '../support/service.ts';
import { connectedConnection, connectionInbox, eventually, helpdeskEvents, injectContactMessage, messagesUntil, setInboxMembers, type Member, type Owner } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * Inbox history sync (core/helpdesk/inboxes/inbox-sync.ts): a team binds a number that has been chatting
 * for a while to a new inbox and brings its past one-to-one chats into the helpdesk.
 *
 * On a sandbox connection, five contacts write (and the account answers one of them through the
 * API, and one from the phone) before any inbox exists, so those are connection messages only; a
 * group writes too. Then the inbox is made, a sixth message arrives live, and the sync runs two
 * chats per page: contacts are found or created, conversations open or are history by the 24-hour
 * rule, messages keep their order, time and delivery, and the two sync events report each page.
 */

const NOW = Math.floor(Date.now() / 1000);
const ANA = '5511960000001';
const BRUNO = '5511960000002';
const CARLA = '5511960000003';
const DAVI = '5511960000004';
const EVA = '5511960000005';
const GROUP = '120363012345678901@g.us';

let owner: Owner;
let agent: Member;
let outsider: Member;
let connectionId: string;
let inboxId: string;
let sentToAna: any;

const db = () => helpdeskDb(service.runtime.ctx.db);
const sync = (id = inboxId, apikey = owner.token) => service.call('POST', `/v3/helpdesk/inboxes/${id}/sync`, { apikey });
const latest = (id = inboxId, apikey = owner.token) => service.call('GET', `/v3/helpdesk/inboxes/${id}/sync`, { apikey });
const inject = (from: string, text: string, extra: Record<string, unknown> = {}) => injectContactMessage(service, owner.token, connectionId, { from, text, ...extra });

/** Until no job of the queue is waiting or running (the worker has handled everything queued). */
async function settled(queue: string): Promise<void> {
  await eventually(async () => {
    const { n } = await service.runtime.ctx.db
      .selectFrom('pgboss.job' as any)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('name' as any, '=', queue)
      .where('state' as any, 'in', ['created', 'retry', 'active'])
      .executeTakeFirstOrThrow();
    // Plugin events wait in a table of their own (the job queue holds only older ones and retries).
    const waiting = queue === PLUGIN_EVENTS_QUEUE ? await service.runtime.ctx.db.selectFrom('plugin_event_queue').select('event_id').executeTakeFirst() : undefined;
    return Number(n) === 0 && !waiting ? true : undefined;
  }, `the ${queue} queue to settle`);
}

/** The sync once it has finished (COMPLETED or FAILED). */
const finished = (id = inboxId) => eventually(async () => ((await latest(id)).body?.status === 'RUNNING' ? undefined : (await latest(id)).body), 'the sync to finish', 30_000);

/**
 * Every conversation of the inbox, asked status by status (the list's `status` filter is
 * given a default of OPEN by Elysia's query parsing when left out).
 */
async function inboxConversations(): Promise<any[]> {
  const all: any[] = [];
  for (const status of ['OPEN', 'PENDING', 'SNOOZED', 'RESOLVED']) {
    const res = await service.call('GET', `/v3/helpdesk/conversations?inboxId=${inboxId}&status=${status}&per_page=100`, { apikey: owner.token });
    expect(res.status).toBe(200);
    all.push(...res.body.data);
  }
  return all;
}

/** The inbox's conversation of the contact with this phone (by the contacts list), with its messages. */
async function conversationOf(phone: string): Promise<{ conversation: any; messages: any[] }> {
  const contact = (await service.call('GET', `/v3/helpdesk/contacts?s=${phone}`, { apikey: owner.token })).body.data[0];
  const list = await inboxConversations();
  const mine = list.filter((c) => c.contactId === contact.id);
  expect(mine).toHaveLength(1);
  const messages = (await service.call('GET', `/v3/helpdesk/conversations/${mine[0].id}/messages?limit=100`, { apikey: owner.token })).body;
  return { conversation: mine[0], messages };
}

/** The sync events of one sync, oldest first. */
async function syncEvents(syncId: string) {
  const of = async (type: string) => (await helpdeskEvents(service, owner.workspaceId, type)).filter((e) => e.syncId === syncId);
  return { contacts: await of('helpdesk.contact_sync.updated'), conversations: await of('helpdesk.conversation_sync.updated') };
}

const service = useTestService();

beforeAll(async () => {
  inboxSyncTuning.chatsPerPage = 2;
  owner = await service.bootstrap({ plan: 'PRO' });
  agent = await memberWithToken(service, owner, 'AGENT');
  outsider = await memberWithToken(service, owner, 'AGENT');
  connectionId = await connectedConnection(service, owner.token, 'old number');

  // Before any inbox: connection messages only.
  expect((await inject(ANA, 'Hello', { pushName: 'Ana', timestamp: NOW - 300 })).status).toBe(201);
  expect((await inject(ANA, 'Are you there?', { pushName: 'Ana', timestamp: NOW - 200 })).status).toBe(201);
  expect((await inject(BRUNO, 'I need an invoice', { pushName: 'Bruno', timestamp: NOW - 100 })).status).toBe(201);
  expect((await inject(CARLA, 'Old question', { pushName: 'Carla', timestamp: NOW - 3 * 86_400 })).status).toBe(201);
  // Answered from the phone itself (stored as an outbound connection message).
  expect((await inject(CARLA, 'Old answer from the phone', { fromMe: true, timestamp: NOW - 3 * 86_400 + 60 })).status).toBe(201);
  expect((await inject(CARLA, 'Thanks!', { pushName: 'Carla', timestamp: NOW - 2 * 86_400 })).status).toBe(201);
  expect((await inject(DAVI, 'Davi here', { pushName: 'Davi', timestamp: NOW - 50 })).status).toBe(201);
  expect((await inject(EVA, 'Eva: first', { pushName: 'Eva', timestamp: NOW - 400 })).status).toBe(201);
  expect((await inject(GROUP, 'Hello group', { pushName: 'Someone' })).status).toBe(201);
  // The account answers Ana through the API: her chat's last message is ours.
  const sent = await service.call('POST', `/v3/connections/${connectionId}/chats/messages`, { apikey: owner.token, body: { to: ANA, text: 'Yes, how can I help?' } });
  expect(sent.status).toBe(201);
  sentToAna = await eventually(async () => {
    const m = (await service.call('GET', `/v3/connections/${connectionId}/chats/messages/${sent.body.id}`, { apikey: owner.token })).body;
    return m.status === 'PENDING' ? undefined : m;
  }, 'the reply to Ana to be sent');
  await settled(PLUGIN_EVENTS_QUEUE);

  // Davi is already a contact of the workspace (found by phone, not created again).
  expect((await service.call('POST', '/v3/helpdesk/contacts', { apikey: owner.token, body: { name: 'Davi (CRM)', phone: `+${DAVI}` } })).status).toBe(201);
  inboxId = await connectionInbox(service, owner.token, 'Old number', connectionId);
  await setInboxMembers(service, owner.token, inboxId, [agent.userId]);
}, HOOK_TIMEOUT);

describe('syncing the history of an inbox', () => {
  let first: any;

  test('before any sync: nothing of the history is in the inbox, and GET answers 404', async () => {
    expect(await inboxConversations()).toEqual([]);
    expectStandardError(await latest(), 404, 'Not Found');
  });

  test('a live message before the sync opens its conversation as usual', async () => {
    expect((await inject(EVA, 'Eva: live before sync', { pushName: 'Eva' })).status).toBe(201);
    await eventually(async () => ((await inboxConversations()).length === 1 ? true : undefined), 'Eva\'s live conversation');
  });

  test('POST answers 202 with the RUNNING sync; it completes, two chats a page, with the counts', async () => {
    const started = await sync();
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ inboxId, status: 'RUNNING', contacts: { total: 5, processed: 0, created: 0 }, conversations: { total: 5, processed: 0, created: 0 }, messages: { imported: 0 }, finishedAt: null, error: null });
    expect(started.body.id).toMatch(UUID);
    first = await finished();
    // Ana, Bruno, Carla are new contacts (Davi existed, Eva came live); Eva's history joins her live conversation.
    expect(first).toEqual({
      id: started.body.id,
      inboxId,
      status: 'COMPLETED',
      contacts: { total: 5, processed: 5, created: 3 },
      conversations: { total: 5, processed: 5, created: 4 },
      messages: { imported: 9 },
      startedAt: started.body.startedAt,
      finishedAt: expect.any(String),
      error: null,
    });
  });

  test('contacts are created with the chat\'s name; an existing one is found by phone; the group is skipped', async () => {
    const contact = async (phone: string) => (await service.call('GET', `/v3/helpdesk/contacts?s=${phone}`, { apikey: owner.token })).body.data;
    expect(await contact(ANA)).toMatchObject([{ name: 'Ana', phone: `+${ANA}` }]);
    expect(await contact(CARLA)).toMatchObject([{ name: 'Carla', phone: `+${CARLA}` }]);
    expect(await contact(DAVI)).toMatchObject([{ name: 'Davi (CRM)', phone: `+${DAVI}` }]);
    expect(await contact('120363012345678901')).toEqual([]);
    const all = (await service.call('GET', '/v3/helpdesk/contacts?per_page=100', { apikey: owner.token })).body;
    expect(all.total).toBe(5);
  });

  test('conversations: OPEN when the contact wrote last within 24 hours, RESOLVED otherwise; messages in order, with their time and delivery', async () => {
    const ana = await conversationOf(ANA);
    // Ana's last message is our answer: history.
    expect(ana.conversation.status).toBe('RESOLVED');
    expect(ana.messages.map((m: any) => [m.direction, m.content])).toEqual([
      ['incoming', 'Hello'],
      ['incoming', 'Are you there?'],
      ['outgoing', 'Yes, how can I help?'],
    ]);
    expect(ana.messages[0]).toMatchObject({ status: null, senderUserId: null, private: false, createdAt: new Date((NOW - 300) * 1000).toISOString() });
    expect(ana.messages[2]).toMatchObject({ status: sentToAna.status, externalError: null, senderUserId: owner.userId, createdAt: sentToAna.createdAt });
    expect(['SENT', 'DELIVERED', 'READ']).toContain(ana.messages[2].status);
    expect(ana.conversation.lastActivityAt).toBe(sentToAna.createdAt);

    const bruno = await conversationOf(BRUNO);
    expect(bruno.conversation.status).toBe('OPEN');
    expect(bruno.messages.map((m: any) => m.content)).toEqual(['I need an invoice']);

    const carla = await conversationOf(CARLA);
    // She wrote last, but two days ago.
    expect(carla.conversation.status).toBe('RESOLVED');
    expect(carla.messages.map((m: any) => [m.direction, m.content, m.status])).toEqual([
      ['incoming', 'Old question', null],
      ['outgoing', 'Old answer from the phone', 'SENT'],
      ['incoming', 'Thanks!', null],
    ]);
    expect(carla.conversation.createdAt).toBe(new Date((NOW - 3 * 86_400) * 1000).toISOString());

    const davi = await conversationOf(DAVI);
    expect(davi.conversation.status).toBe('OPEN');

    // Eva's older message goes before her live one, in the same conversation.
    const eva = await conversationOf(EVA);
    expect(eva.conversation.status).toBe('OPEN');
    expect(eva.messages.map((m: any) => m.content)).toEqual(['Eva: first', 'Eva: live before sync']);
  });

  test('the sync events report the start, each page and the end, each with its own counts; history records no conversation or message events', async () => {
    const { contacts, conversations } = await syncEvents(first.id);
    const common = { accountId: owner.workspaceId, inboxId, syncId: first.id, startedAt: first.startedAt, total: 5, error: null };
    expect(contacts).toEqual([
      { type: 'helpdesk.contact_sync.updated', ...common, status: 'RUNNING', processed: 0, created: 0, finishedAt: null },
      { type: 'helpdesk.contact_sync.updated', ...common, status: 'RUNNING', processed: 2, created: 2, finishedAt: null },
      { type: 'helpdesk.contact_sync.updated', ...common, status: 'RUNNING', processed: 4, created: 3, finishedAt: null },
      { type: 'helpdesk.contact_sync.updated', ...common, status: 'COMPLETED', processed: 5, created: 3, finishedAt: first.finishedAt },
    ]);
    expect(conversations).toEqual([
      { type: 'helpdesk.conversation_sync.updated', ...common, status: 'RUNNING', processed: 0, created: 0, messagesImported: 0, finishedAt: null },
      { type: 'helpdesk.conversation_sync.updated', ...common, status: 'RUNNING', processed: 2, created: 2, messagesImported: 4, finishedAt: null },
      { type: 'helpdesk.conversation_sync.updated', ...common, status: 'RUNNING', processed: 4, created: 4, messagesImported: 8, finishedAt: null },
      { type: 'helpdesk.conversation_sync.updated', ...common, status: 'COMPLETED', processed: 5, created: 4, messagesImported: 9, finishedAt: first.finishedAt },
    ]);
    // Only Eva's live conversation and message were announced.
    expect((await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.created')).filter((e) => e.inboxId === inboxId)).toHaveLength(1);
    const announced = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.message.created')).filter((e) => e.inboxId === inboxId);
    expect(announced.map((e) => e.message.content)).toEqual(['Eva: live before sync']);
  });

  test('a message arriving live afterwards joins its conversation; a second sync imports nothing new and duplicates nothing', async () => {
    expect((await inject(BRUNO, 'Still need that invoice', { pushName: 'Bruno' })).status).toBe(201);
    const { conversation } = await conversationOf(BRUNO);
    await messagesUntil(service, owner.token, conversation.id, 2);
    await settled(PLUGIN_EVENTS_QUEUE);

    const again = await sync();
    expect(again.status).toBe(202);
    expect(again.body.id).not.toBe(first.id);
    const second = await finished();
    expect(second).toMatchObject({ status: 'COMPLETED', contacts: { total: 5, processed: 5, created: 0 }, conversations: { total: 5, processed: 5, created: 0 }, messages: { imported: 0 } });

    expect((await conversationOf(BRUNO)).messages.map((m: any) => m.content)).toEqual(['I need an invoice', 'Still need that invoice']);
    expect((await conversationOf(ANA)).messages).toHaveLength(3);
    expect(await inboxConversations()).toHaveLength(5);
    const carried = await db().selectFrom('helpdesk_messages').select('chat_message_id').where('workspace_id', '=', owner.workspaceId).where('chat_message_id', 'is not', null).execute();
    expect(carried).toHaveLength(11);
  });
});

describe('one sync at a time, and syncs that fail', () => {
  const runningRow = (overrides: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    workspace_id: owner.workspaceId,
    inbox_id: inboxId,
    connection_id: connectionId,
    status: 'RUNNING' as const,
    cursor: null,
    chats_per_page: 2,
    contacts_total: 5,
    contacts_processed: 0,
    contacts_created: 0,
    conversations_total: 5,
    conversations_processed: 0,
    conversations_created: 0,
    messages_imported: 0,
    error: null,
    started_at: new Date(),
    finished_at: null,
    updated_at: new Date(),
    ...overrides,
  });

  test('409 while a sync of the inbox runs; GET shows the running one', async () => {
    const row = runningRow();
    await db().insertInto('helpdesk_inbox_syncs').values(row).execute();
    expectStandardError(await sync(), 409, 'Conflict');
    expect((await latest()).body).toMatchObject({ id: row.id, status: 'RUNNING' });
    // The database refuses a second RUNNING row too (two starts at once).
    await expect(db().insertInto('helpdesk_inbox_syncs').values(runningRow()).execute()).rejects.toThrow();
    await db().deleteFrom('helpdesk_inbox_syncs').where('id', '=', row.id).execute();
  });

  test('a RUNNING sync with no progress for 15 minutes is abandoned: it FAILS, with its events, and a new one starts', async () => {
    const old = new Date(Date.now() - 20 * 60_000);
    const row = runningRow({ started_at: old, updated_at: old });
    await db().insertInto('helpdesk_inbox_syncs').values(row).execute();
    const started = await sync();
    expect(started.status).toBe(202);
    const abandoned = await db().selectFrom('helpdesk_inbox_syncs').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    expect(abandoned.status).toBe('FAILED');
    expect(abandoned.error).toContain('no progress');
    const { contacts, conversations } = await syncEvents(row.id);
    expect(contacts).toEqual([expect.objectContaining({ status: 'FAILED', error: abandoned.error, processed: 0, finishedAt: expect.any(String) })]);
    expect(conversations).toEqual([expect.objectContaining({ status: 'FAILED', error: abandoned.error })]);
    expect((await finished()).status).toBe('COMPLETED');
  });

  test('a sync whose inbox lost its connection FAILS with its error, and reports it', async () => {
    const row = runningRow({ connection_id: crypto.randomUUID() });
    await service.runtime.ctx.db.transaction().execute(async (trx) => {
      await helpdeskDb(trx).insertInto('helpdesk_inbox_syncs').values(row).execute();
      await service.runtime.ctx.queue.outbox(trx).enqueue(INBOX_SYNC_QUEUE, { workspaceId: owner.workspaceId, syncId: row.id, after: null }, { dedupeKey: `${row.id}:` });
    });
    const failed = await finished();
    expect(failed).toMatchObject({ id: row.id, status: 'FAILED', error: 'The inbox lost its connection during the sync', finishedAt: expect.any(String) });
    const { contacts } = await syncEvents(row.id);
    expect(contacts.at(-1)).toMatchObject({ status: 'FAILED', error: 'The inbox lost its connection during the sync' });
  });
});

describe('who may sync', () => {
  test('an Agent of the inbox reads the sync but may not start one (403); another Agent sees neither (404)', async () => {
    expect((await latest(inboxId, agent.token)).status).toBe(200);
    const refused = await sync(inboxId, agent.token);
    expectStandardError(refused, 403, 'Forbidden');
    expect(refused.body.message).toBe('Insufficient account permissions');
    expectStandardError(await sync(inboxId, outsider.token), 404, 'Not Found');
    expectStandardError(await latest(inboxId, outsider.token), 404, 'Not Found');
    expectStandardError(await sync(crypto.randomUUID()), 404, 'Not Found');
  });

  test('422 for an API inbox: it has no chat history', async () => {
    const api = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: owner.token, body: { name: 'App', channelType: 'API' } });
    expect(api.status).toBe(201);
    expectStandardError(await sync(api.body.id), 422, 'Unprocessable Entity');
  });

  test('a FREE workspace is refused with 403 HELPDESK_PLAN_REQUIRED; reading works', async () => {
    const ws = await service.bootstrap({ plan: 'PRO' });
    const line = await connectedConnection(service, ws.token, 'line');
    const inbox = await connectionInbox(service, ws.token, 'Soon free', line);
    await service.runtime.ctx.db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', ws.workspaceId).execute();
    const res = await sync(inbox, ws.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'HELPDESK_PLAN_REQUIRED', hint: 'The helpdesk is available on the PRO plan' });
    expectStandardError(await latest(inbox, ws.token), 404, 'Not Found');
  });
});
