import { afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { HELPDESK_EVENT_TYPES } from '../../core/helpdesk/events.ts';
import { broadcastHelpdeskEvent } from '../../plugins/helpdesk/realtime/broadcast.ts';
import { onNoteWritten, onNotifyingEvent } from '../../plugins/helpdesk/notifications/subscribers.ts';
import { useTestService } from '../support/service.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import { useReceiver, type Hit } from '../support/webhook-receiver.ts';
import {
  conversationFromContact,
  eventually,
  helpdeskEvents,
  injectContactMessage,
  setInboxMembers,
  subscribersDone,
  useHelpdeskWorkspace,
} from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, useMember, UUID } from './helpers.ts';

/**
 * Mentions and in-app notifications (issue 7 item 6; spec 6.5 `helpdesk.mention.created`, 6.7
 * `helpdesk.notification.created`: "emitted only to the recipient user's room after an in-app
 * notification is created … It is not sent to helpdesk webhooks"), on a real service with real
 * Socket.IO clients and a real webhook receiver.
 */

const SECRET = 'mentions-signing-secret-0123456789';
const PHONE = '5511966660001';
const receiver = useReceiver();
let conversationId: string;
let noteId: string;
const open: TestSocket[] = [];

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'mentions line', inbox: 'Support', manualAssignment: true });
/** A second Agent of the inbox, never mentioned in the first note. */
const colleague = useMember(service, hd.owner, 'AGENT');
/** An Agent of the workspace outside the inbox. */
const outsider = useMember(service, hd.owner, 'AGENT');

beforeAll(async () => {
  await setInboxMembers(service, hd.owner.token, hd.inboxId, [hd.agent.userId, colleague.userId]);
  const webhook = await service.call('POST', '/v3/helpdesk/webhooks', { apikey: hd.owner.token, body: { url: receiver.url('/hooks'), subscriptions: [...HELPDESK_EVENT_TYPES], signingSecret: SECRET } });
  expect(webhook.status).toBe(201);
  conversationId = (await conversationFromContact(service, hd.owner.token, hd.connectionId, PHONE, { text: 'My order is late', pushName: 'Rita' })).id;
}, HOOK_TIMEOUT);

afterEach(() => {
  for (const socket of open.splice(0)) socket.close();
});

async function connect(apikey: string): Promise<TestSocket> {
  const socket = await connectHelpdesk(service.url, apikey);
  open.push(socket);
  return socket;
}

/** Sent to the workspace room after everything else: once every socket has it, what was emitted before has arrived. */
async function barrier(...sockets: TestSocket[]): Promise<void> {
  const marker = crypto.randomUUID();
  await broadcastHelpdeskEvent(service.runtime.ctx.realtime!, { type: 'helpdesk.label.created', accountId: hd.owner.workspaceId, marker });
  await Promise.all(sockets.map((s) => s.next('helpdesk.label.created', (p) => p.marker === marker)));
}

const eventsOf = (socket: TestSocket, event: string) => socket.received.filter((r) => r.event === event).map((r) => r.payload);
const note = (apikey: string, content: string) => service.call('POST', `/v3/helpdesk/conversations/${conversationId}/messages`, { apikey, body: { content, private: true } });
const notifications = (apikey: string, query = '') => service.call('GET', `/v3/helpdesk/notifications${query}`, { apikey });
const unreadCount = async (apikey: string) => (await service.call('GET', '/v3/helpdesk/notifications/unread-count', { apikey })).body.count;

async function hookOf(event: string, match: (data: any) => boolean): Promise<Hit> {
  return eventually(async () => receiver.hits('/hooks').find((h) => h.json?.event === event && match(h.json.data)), `${event} on the webhook`);
}

describe('mentions in a private note', () => {
  test('the mentioned agent gets helpdesk.mention.created (webhook, signed; their socket) and a notification; nobody else does', async () => {
    const [agentSocket, colleagueSocket, outsiderSocket, ownerSocket] = await Promise.all([connect(hd.agent.token), connect(colleague.token), connect(outsider.token), connect(hd.owner.token)]);
    // The agent by the canonical form, the outsider by email (an Agent outside the inbox: skipped).
    const written = await note(hd.owner.token, `@[Agent Smith](user:${hd.agent.userId}) can you check? cc @${outsider.email.toUpperCase()}, and again @${hd.agent.email}`);
    expect(written.status).toBe(201);
    noteId = written.body.id;

    const hit = await hookOf('helpdesk.mention.created', (d) => d.messageId === noteId);
    expect(hit.headers.get('x-helpdesk-event')).toBe('helpdesk.mention.created');
    expect(hit.headers.get('x-helpdesk-signature')).toBe(createHmac('sha256', SECRET).update(hit.raw).digest('hex'));
    expect(hit.json.data).toEqual({
      type: 'helpdesk.mention.created',
      accountId: hd.owner.workspaceId,
      conversationId,
      inboxId: hd.inboxId,
      messageId: noteId,
      mentionedUserId: hd.agent.userId,
      actorUserId: hd.owner.userId,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });

    const mention = await agentSocket.next('helpdesk.mention.created', (p) => p.messageId === noteId);
    expect(mention.mentionedUserId).toBe(hd.agent.userId);
    const told = await agentSocket.next('helpdesk.notification.created', (p) => p.message?.id === noteId);
    expect(told).toMatchObject({
      type: 'helpdesk.notification.created',
      accountId: hd.owner.workspaceId,
      userId: hd.agent.userId,
      notificationId: expect.stringMatching(UUID),
      notificationType: 'mention',
      primaryActorType: 'conversation',
      primaryActorId: conversationId,
      secondaryActorType: 'user',
      secondaryActorId: hd.owner.userId,
      createdAt: expect.any(String),
    });
    expect(told.message).toMatchObject({ id: noteId, private: true, direction: 'outgoing', content: written.body.content, attachments: [] });

    await barrier(agentSocket, colleagueSocket, outsiderSocket, ownerSocket);
    // The colleague hears of the note (their inbox) but not of the mention; the outsider of nothing.
    expect(eventsOf(colleagueSocket, 'helpdesk.message.created').some((p) => p.message.id === noteId)).toBe(true);
    for (const socket of [colleagueSocket, outsiderSocket, ownerSocket]) {
      expect(eventsOf(socket, 'helpdesk.mention.created')).toEqual([]);
      expect(eventsOf(socket, 'helpdesk.notification.created')).toEqual([]);
    }
    // Mentioned twice, recorded once; the outsider not at all.
    await subscribersDone(service, hd.owner.workspaceId, 'helpdesk.message.created', (d) => d.message?.id === noteId);
    expect((await helpdeskEvents(service, hd.owner.workspaceId, 'helpdesk.mention.created')).map((e) => e.mentionedUserId)).toEqual([hd.agent.userId]);
    expect((await notifications(outsider.token)).body.total).toBe(0);
    // Realtime only: never in the event log, never on a webhook.
    expect(await helpdeskEvents(service, hd.owner.workspaceId, 'helpdesk.notification.created')).toEqual([]);
    expect(receiver.hits('/hooks').some((h) => h.json?.event === 'helpdesk.notification.created')).toBe(false);
  });

  test('the subscribers run again (a retried job) add no mention and no notification', async () => {
    const rows = await service.runtime.ctx.db.selectFrom('events').selectAll().where('workspace_id', '=', hd.owner.workspaceId).where('event', 'in', ['helpdesk.message.created', 'helpdesk.mention.created']).execute();
    const payloadOf = (row: (typeof rows)[number]) => ({ eventId: row.id, workspaceId: row.workspace_id, event: row.event, connectionId: null, remoteJid: null, data: (typeof row.payload === 'string' ? JSON.parse(row.payload) : (row.payload as any)).data });
    const created = rows.find((r) => r.event === 'helpdesk.message.created' && payloadOf(r).data.message?.id === noteId)!;
    const mentioned = rows.find((r) => r.event === 'helpdesk.mention.created')!;
    await onNoteWritten(payloadOf(created), service.runtime.ctx);
    await onNotifyingEvent(payloadOf(mentioned), service.runtime.ctx);
    expect(await helpdeskEvents(service, hd.owner.workspaceId, 'helpdesk.mention.created')).toHaveLength(1);
    expect((await notifications(hd.agent.token)).body.total).toBe(1);
  });

  test('editing the note to mention someone new mentions only them', async () => {
    const colleagueSocket = await connect(colleague.token);
    const edited = await service.call('PATCH', `/v3/helpdesk/conversations/${conversationId}/messages/${noteId}`, {
      apikey: hd.owner.token,
      body: { content: `@[Agent Smith](user:${hd.agent.userId}) and @[Colleague](user:${colleague.userId}) please check` },
    });
    expect(edited.status).toBe(200);
    const told = await colleagueSocket.next('helpdesk.notification.created', (p) => p.message?.id === noteId);
    expect(told).toMatchObject({ userId: colleague.userId, notificationType: 'mention', secondaryActorId: hd.owner.userId });
    await subscribersDone(service, hd.owner.workspaceId, 'helpdesk.message.updated', (d) => d.messageId === noteId);
    expect((await helpdeskEvents(service, hd.owner.workspaceId, 'helpdesk.mention.created')).map((e) => e.mentionedUserId)).toEqual([hd.agent.userId, colleague.userId]);
  });

  test('mentioning yourself records the mention but tells you nothing', async () => {
    const written = await note(hd.agent.token, `note to self @${hd.agent.email}`);
    expect(written.status).toBe(201);
    await subscribersDone(service, hd.owner.workspaceId, 'helpdesk.mention.created', (d) => d.messageId === written.body.id);
    expect((await notifications(hd.agent.token)).body.data.some((n: any) => n.messageId === written.body.id)).toBe(false);
  });
});

describe('notifications of assignment and of new messages', () => {
  test('assigned by someone else: notified (a socket event too); assigning yourself: not', async () => {
    const agentSocket = await connect(hd.agent.token);
    const assigned = await service.call('PATCH', `/v3/helpdesk/conversations/${conversationId}`, { apikey: hd.owner.token, body: { assigneeUserId: hd.agent.userId } });
    expect(assigned.status).toBe(200);
    const told = await agentSocket.next('helpdesk.notification.created', (p) => p.notificationType === 'assigned');
    expect(told).toMatchObject({ userId: hd.agent.userId, primaryActorType: 'conversation', primaryActorId: conversationId, secondaryActorType: 'user', secondaryActorId: hd.owner.userId });
    expect(told.message).toBeUndefined();

    // The colleague takes it themselves, then hands it back.
    expect((await service.call('PATCH', `/v3/helpdesk/conversations/${conversationId}`, { apikey: colleague.token, body: { assigneeUserId: colleague.userId } })).status).toBe(200);
    await subscribersDone(service, hd.owner.workspaceId, 'helpdesk.conversation.assignee_changed', (d) => d.toAssigneeUserId === colleague.userId);
    expect((await notifications(colleague.token)).body.data.filter((n: any) => n.notificationType === 'assigned')).toEqual([]);
    expect((await service.call('PATCH', `/v3/helpdesk/conversations/${conversationId}`, { apikey: colleague.token, body: { assigneeUserId: hd.agent.userId } })).status).toBe(200);
    await agentSocket.next('helpdesk.notification.created', (p) => p.notificationType === 'assigned' && p.secondaryActorId === colleague.userId);
  });

  test('the contact writes on a conversation assigned to you: notified, with the message', async () => {
    const agentSocket = await connect(hd.agent.token);
    expect((await injectContactMessage(service, hd.owner.token, hd.connectionId, { from: PHONE, text: 'Any news?' })).status).toBe(201);
    const told = await agentSocket.next('helpdesk.notification.created', (p) => p.notificationType === 'new_message_in_assigned');
    const contactId = (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}`, { apikey: hd.owner.token })).body.contactId;
    expect(told).toMatchObject({ userId: hd.agent.userId, primaryActorId: conversationId, secondaryActorType: 'contact', secondaryActorId: contactId });
    expect(told.message).toMatchObject({ direction: 'incoming', content: 'Any news?' });
  });
});

describe('the notification list', () => {
  test('your own only, newest first; unread filter; read one, read all, unread count', async () => {
    const all = await notifications(hd.agent.token);
    expect(all.status).toBe(200);
    expect(all.body.data.map((n: any) => n.notificationType)).toEqual(['new_message_in_assigned', 'assigned', 'assigned', 'mention']);
    expect(all.body).toMatchObject({ total: 4, currentPage: 1, perPage: 10, totalPages: 1 });
    const mention = all.body.data[3];
    expect(mention).toEqual({
      id: expect.stringMatching(UUID),
      notificationType: 'mention',
      primaryActorType: 'conversation',
      primaryActorId: conversationId,
      secondaryActorType: 'user',
      secondaryActorId: hd.owner.userId,
      conversationId,
      messageId: noteId,
      readAt: null,
      createdAt: expect.any(String),
    });
    expect(await unreadCount(hd.agent.token)).toBe(4);
    // Another member's notifications are not theirs to see or mark.
    expect((await notifications(colleague.token)).body.data.map((n: any) => n.notificationType)).toEqual(['mention']);
    expectStandardError(await service.call('POST', `/v3/helpdesk/notifications/${mention.id}/read`, { apikey: colleague.token }), 404, 'Not Found');
    expectStandardError(await service.call('POST', '/v3/helpdesk/notifications/not-an-id/read', { apikey: hd.agent.token }), 404, 'Not Found');

    const read = await service.call('POST', `/v3/helpdesk/notifications/${mention.id}/read`, { apikey: hd.agent.token });
    expect(read.status).toBe(201);
    expect(read.body.readAt).toEqual(expect.any(String));
    const again = await service.call('POST', `/v3/helpdesk/notifications/${mention.id}/read`, { apikey: hd.agent.token, body: {} });
    expect(again.body.readAt).toBe(read.body.readAt);
    expect(await unreadCount(hd.agent.token)).toBe(3);
    const unread = await notifications(hd.agent.token, '?unread=true&per_page=2');
    expect(unread.body).toMatchObject({ total: 3, totalPages: 2, perPage: 2 });
    expect(unread.body.data.every((n: any) => n.readAt === null)).toBe(true);
    expectStandardError(await notifications(hd.agent.token, '?unread=yes'), 400, 'Bad Request');

    const all_ = await service.call('POST', '/v3/helpdesk/notifications/read-all', { apikey: hd.agent.token });
    expect(all_.body).toEqual({ updated: 3 });
    expect(await unreadCount(hd.agent.token)).toBe(0);
    expect((await notifications(hd.agent.token, '?unread=true')).body.total).toBe(0);
    expect((await notifications(hd.agent.token)).body.total).toBe(4);
    // The colleague's stay unread.
    expect(await unreadCount(colleague.token)).toBe(1);
  });

  test('a notification goes with its conversation', async () => {
    const deleted = await service.call('DELETE', `/v3/helpdesk/conversations/${conversationId}`, { apikey: hd.owner.token });
    expect(deleted.status).toBe(200);
    expect((await notifications(hd.agent.token)).body.total).toBe(0);
    expect(await unreadCount(colleague.token)).toBe(0);
  });
});
