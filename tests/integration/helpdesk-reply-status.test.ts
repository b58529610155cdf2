import { describe, expect, test } from 'bun:test';
import { PLUGIN_EVENTS_QUEUE } from '../../adapters/postgres/repositories/event-store.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { deliveriesWithLaggingReplies } from '../../plugins/helpdesk/conversations/subscribers.ts';
import { useTestService } from '../support/service.ts';
import { conversationFromContact, helpdeskEvents, useHelpdeskLine, messageWhen } from '../support/helpdesk.ts';
import { workerSettled } from '../support/wait.ts';

/**
 * A reply's delivery status, stored and moved by receipts (spec 2.12: "A send through REST returns
 * immediately with `status: PENDING`; delivery is asynchronous"; 3.2: "`PENDING` | delivery
 * outcome | asynchronous | `SENT`, `DELIVERED`, `READ` or `FAILED` | Emits
 * `helpdesk.message.status_changed` with `messageId`, `toStatus`, `externalError` (set on
 * `FAILED`)"). The sandbox network stands in: its receipts endpoint plays the contact's phone,
 * and recipients starting with 999 are not on the network (the send fails for good).
 */

const TEST_TIMEOUT = 30_000;

const service = useTestService();
const line = useHelpdeskLine(service, { connection: 'receipts line', inbox: 'Receipts' });
const { owner } = line;

const newConversation = (phone: string) => conversationFromContact(service, owner.token, line.connectionId, phone, { text: 'hello?' });

async function reply(conversationId: string, content: string): Promise<any> {
  const res = await service.call('POST', `/v3/helpdesk/conversations/${conversationId}/messages`, { apikey: owner.token, body: { content } });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ status: 'PENDING', externalError: null });
  return res.body;
}

/** A reply in a new conversation with this contact, once the network took it (SENT), with the network's id for it. */
async function sentReply(phone: string, content: string): Promise<{ c: any; r: any; chatId: string }> {
  const c = await newConversation(phone);
  const r = await reply(c.id, content);
  await reaches(c.id, r.id, 'SENT');
  const { chat_message_id: chatId } = await stored(r.id);
  return { c, r, chatId: chatId! };
}

/** The reply as REST shows it. */
async function shown(conversationId: string, messageId: string): Promise<any> {
  const list = await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages?limit=100`, { apikey: owner.token });
  return list.body.find((m: any) => m.id === messageId);
}

const reaches = (conversationId: string, messageId: string, status: string) =>
  messageWhen(service, owner.token, conversationId, messageId, (m) => m.status === status, { what: `the reply to reach ${status}` });

/** The stored row: the status is kept, not derived when read. */
async function stored(messageId: string) {
  return helpdeskDb(service.runtime.ctx.db).selectFrom('helpdesk_messages').select(['status', 'external_error', 'chat_message_id']).where('id', '=', messageId).executeTakeFirstOrThrow();
}

async function statusEvents(messageId: string): Promise<any[]> {
  return (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.message.status_changed')).filter((d: any) => d.messageId === messageId);
}

const receipt = (messageId: string, status: string, error?: { code: string | number; title: string }) =>
  service.call('POST', `/v3/connections/${line.connectionId}/sandbox/receipts`, { apikey: owner.token, body: { messageId, status, ...(error && { error }) } });

/** Lets queued subscriber jobs run (for asserting that nothing more happens). */
const settle = () => workerSettled(service);

describe('a reply follows its receipts', () => {
  test('PENDING → SENT → DELIVERED → READ, stored, one status_changed event per move', async () => {
    const c = await newConversation('5511944440001');
    const r = await reply(c.id, 'On its way');
    const sent = await reaches(c.id, r.id, 'SENT');
    expect(sent.externalError).toBeNull();
    const { chat_message_id: chatId } = await stored(r.id);
    expect(chatId).not.toBeNull();
    expect((await stored(r.id)).status).toBe('SENT');

    expect((await receipt(chatId!, 'DELIVERED')).status).toBe(201);
    await reaches(c.id, r.id, 'DELIVERED');
    expect((await stored(r.id)).status).toBe('DELIVERED');

    expect((await receipt(chatId!, 'READ')).status).toBe(201);
    await reaches(c.id, r.id, 'READ');
    expect((await stored(r.id)).status).toBe('READ');

    const events = await statusEvents(r.id);
    expect(events.map((e) => [e.fromStatus, e.toStatus])).toEqual([
      ['PENDING', 'SENT'],
      ['SENT', 'DELIVERED'],
      ['DELIVERED', 'READ'],
    ]);
    for (const e of events) {
      expect(e).toMatchObject({ type: 'helpdesk.message.status_changed', accountId: owner.workspaceId, conversationId: c.id, inboxId: c.inboxId, messageId: r.id, externalError: null });
    }

    // A late receipt (DELIVERED after READ) and a replayed event change nothing and record nothing.
    expect((await receipt(chatId!, 'DELIVERED')).status).toBe(201);
    const db = service.runtime.ctx.db;
    const last = await db.selectFrom('events').select('id').where('connection_id', '=', line.connectionId).where('event', '=', 'messages.update').orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const job = service.runtime.jobs.find((j) => j.queue === PLUGIN_EVENTS_QUEUE)!;
    await job.handle!({ eventId: last.id }, { id: 'replay', retryCount: 1 });
    await settle();
    expect((await shown(c.id, r.id)).status).toBe('READ');
    expect(await statusEvents(r.id)).toHaveLength(3);
  }, TEST_TIMEOUT);

  test('a READ receipt straight after SENT moves the reply to READ in one step', async () => {
    const { c, r, chatId } = await sentReply('5511944440002', 'Read me');
    await receipt(chatId, 'READ');
    await reaches(c.id, r.id, 'READ');
    expect((await statusEvents(r.id)).map((e) => e.toStatus)).toEqual(['SENT', 'READ']);
  }, TEST_TIMEOUT);

  test('a FAILED receipt carries the provider\'s error as externalError', async () => {
    const { c, r, chatId } = await sentReply('5511944440003', 'Outside the window');
    await receipt(chatId, 'FAILED', { code: 131047, title: 'Re-engagement message' });
    const failed = await reaches(c.id, r.id, 'FAILED');
    expect(failed.externalError).toBe('Re-engagement message (131047)');
    expect(await stored(r.id)).toMatchObject({ status: 'FAILED', external_error: 'Re-engagement message (131047)' });
    expect((await statusEvents(r.id)).at(-1)).toMatchObject({ fromStatus: 'SENT', toStatus: 'FAILED', externalError: 'Re-engagement message (131047)' });
    // FAILED is terminal: a later READ changes nothing.
    await receipt(chatId, 'READ');
    await settle();
    expect((await shown(c.id, r.id)).status).toBe('FAILED');
    expect(await statusEvents(r.id)).toHaveLength(2);
  }, TEST_TIMEOUT);

  test('a send the network refuses (a sandbox number starting with 999): PENDING → FAILED with externalError', async () => {
    const c = await newConversation('9995550001');
    const r = await reply(c.id, 'Nobody is there');
    const failed = await reaches(c.id, r.id, 'FAILED');
    expect(failed.externalError).toBe('9995550001@s.whatsapp.net is not on the network (not_on_network)');
    expect((await statusEvents(r.id)).map((e) => [e.fromStatus, e.toStatus, e.externalError])).toEqual([['PENDING', 'FAILED', '9995550001@s.whatsapp.net is not on the network (not_on_network)']]);
  }, TEST_TIMEOUT);

  test('a private note has no status and never moves', async () => {
    const c = await newConversation('5511944440004');
    const note = await service.call('POST', `/v3/helpdesk/conversations/${c.id}/messages`, { apikey: owner.token, body: { content: 'internal', private: true } });
    expect(note.body.status).toBeNull();
    await reply(c.id, 'public');
    await settle();
    expect((await shown(c.id, note.body.id)).status).toBeNull();
    expect(await statusEvents(note.body.id)).toHaveLength(0);
  }, TEST_TIMEOUT);
});

describe('which delivery events the subscriber runs on (a batch is selected in one read)', () => {
  test('an event naming a lagging reply, or in its chat, is selected; events of other chats or connections are not', async () => {
    const c = await newConversation('5511944440091');
    const r = await reply(c.id, 'Selected?');
    await reaches(c.id, r.id, 'SENT');
    const db = service.runtime.ctx.db;
    const { chat_message_id: chatId } = await stored(r.id);
    const chat = await db.selectFrom('messages').select(['external_id', 'remote_jid']).where('id', '=', chatId!).executeTakeFirstOrThrow();
    // A receipt stored on the connection message whose event has not run yet: the reply lags.
    await db.updateTable('messages').set({ status: 'DELIVERED' }).where('id', '=', chatId!).execute();
    try {
      const event = (eventId: string, connection: string, remoteJid: string, data: unknown) => ({ eventId, workspaceId: owner.workspaceId, event: 'messages.update', connectionId: connection, remoteJid, data });
      const selected = await deliveriesWithLaggingReplies(
        [
          event('names-it', line.connectionId, 'someone-else@s.whatsapp.net', { key: { id: chat.external_id } }),
          event('its-chat', line.connectionId, chat.remote_jid, { key: { id: 'ANOTHER.MESSAGE' } }),
          event('our-id', line.connectionId, 'someone-else@s.whatsapp.net', { statuses: [{ id: chatId }] }),
          event('other-chat', line.connectionId, '5511900009999@s.whatsapp.net', { key: { id: 'UNRELATED' } }),
          event('other-connection', crypto.randomUUID(), chat.remote_jid, { key: { id: chat.external_id } }),
        ],
        service.runtime.ctx,
      );
      expect([...selected].sort()).toEqual(['its-chat', 'names-it', 'our-id']);
    } finally {
      await db.updateTable('messages').set({ status: 'SENT' }).where('id', '=', chatId!).execute();
    }
    // Nothing lags now: nothing is selected.
    const none = await deliveriesWithLaggingReplies([{ eventId: 'after', workspaceId: owner.workspaceId, event: 'send.message', connectionId: line.connectionId, remoteJid: chat.remote_jid, data: { key: { id: chat.external_id } } }], service.runtime.ctx);
    expect([...none]).toEqual([]);
  }, TEST_TIMEOUT);
});
