import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { HELPDESK_EVENT_TYPES } from '../../core/helpdesk/events.ts';
import { useTestService } from '../support/service.ts';
import { useReceiver, type Hit } from '../support/webhook-receiver.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import { injectContactMessage, sentToContact, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT, useMember } from './helpers.ts';

/**
 * Issue 6, "Done when": "Two agents and a sandbox contact hold a conversation live over
 * websocket, with every webhook event delivered and signed". The contact writes on the sandbox
 * network, two agents (a Manager and an Agent of the inbox) see it live on `/helpdesk`, type to
 * each other, reply and resolve; the contact gets the reply; a helpdesk webhook receives every
 * event, signed, exactly the events the sockets saw.
 */

const SECRET = 'live-session-secret-0123456789';
const CONTACT = '5511933330001';
const receiver = useReceiver();
const sockets: TestSocket[] = [];

const service = useTestService();
// The manager assigns by hand in this session (round-robin has its own test).
const hd = useHelpdeskWorkspace(service, { connection: 'live line', inbox: 'Live', manualAssignment: true });
const { owner, agent } = hd;
const manager = useMember(service, owner, 'MANAGER');

beforeAll(async () => {
  const webhook = await service.call('POST', '/v3/helpdesk/webhooks', { apikey: owner.token, body: { url: receiver.url('/live'), subscriptions: [...HELPDESK_EVENT_TYPES], signingSecret: SECRET } });
  expect(webhook.status).toBe(201);
}, HOOK_TIMEOUT);

afterAll(async () => {
  for (const socket of sockets) socket.close();
}, HOOK_TIMEOUT);

async function connect(apikey: string): Promise<TestSocket> {
  const socket = await connectHelpdesk(service.url, apikey);
  sockets.push(socket);
  return socket;
}

const signed = (hit: Hit) => hit.headers.get('x-helpdesk-signature') === createHmac('sha256', SECRET).update(hit.raw).digest('hex');

describe('a live conversation', () => {
  test('two agents and a sandbox contact, with every event on the sockets and on the signed webhook', async () => {
    const managerSocket = await connect(manager.token);
    const agentSocket = await connect(agent.token);

    // The contact writes: both agents see the conversation open and the message arrive.
    await injectContactMessage(service, owner.token, hd.connectionId, { from: CONTACT, text: 'Hi, my parcel is late', pushName: 'Caio' });
    const created = await agentSocket.next('helpdesk.conversation.created', (e) => e.inboxId === hd.inboxId, { timeoutMs: 20_000 });
    await managerSocket.next('helpdesk.conversation.created', (e) => e.conversationId === created.conversationId);
    const conversationId: string = created.conversationId;
    const incoming = await agentSocket.next('helpdesk.message.created', (e) => e.conversationId === conversationId);
    expect(incoming.message).toMatchObject({ direction: 'incoming', content: 'Hi, my parcel is late' });

    // Both open the conversation; the agent types and the manager sees it (the agent does not get an echo).
    expect(await agentSocket.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });
    expect(await managerSocket.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });
    agentSocket.socket.emit('typing:start', { conversationId });
    expect(await managerSocket.next('typing:start', (e) => e.conversationId === conversationId)).toEqual({ conversationId, userId: agent.userId });

    // The agent replies; both see the message, the contact's chat gets it.
    const reply = await service.call('POST', `/v3/helpdesk/conversations/${conversationId}/messages`, { apikey: agent.token, body: { content: 'Sorry! It arrives tomorrow.' } });
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe('PENDING');
    const replied = await managerSocket.next('helpdesk.message.created', (e) => e.message?.id === reply.body.id);
    // "Messages in REST responses and in realtime events have the same fully hydrated shape."
    expect(replied.message).toEqual(reply.body);
    const sent = await sentToContact(service, owner.token, hd.connectionId, CONTACT, 'It arrives tomorrow');
    expect(sent).toBeDefined();

    // The contact's phone reports the reply read: the status moves live.
    expect((await service.call('POST', `/v3/connections/${hd.connectionId}/sandbox/receipts`, { apikey: owner.token, body: { messageId: sent.id, status: 'READ' } })).status).toBe(201);
    const read = await agentSocket.next('helpdesk.message.status_changed', (e) => e.messageId === reply.body.id && e.toStatus === 'READ', { timeoutMs: 20_000 });
    expect(read).toMatchObject({ conversationId, inboxId: hd.inboxId, externalError: null });

    // The manager assigns and resolves; the agent sees both.
    await service.call('PATCH', `/v3/helpdesk/conversations/${conversationId}`, { apikey: manager.token, body: { assigneeUserId: agent.userId } });
    await service.call('POST', `/v3/helpdesk/conversations/${conversationId}/status`, { apikey: manager.token, body: { status: 'RESOLVED' } });
    expect(await agentSocket.next('helpdesk.conversation.assignee_changed', (e) => e.conversationId === conversationId)).toMatchObject({ toAssigneeUserId: agent.userId, actorUserId: manager.userId });
    expect(await agentSocket.next('helpdesk.conversation.status_changed', (e) => e.conversationId === conversationId)).toMatchObject({ fromStatus: 'OPEN', toStatus: 'RESOLVED' });
    // The resolve leaves an activity message, a helpdesk event of its own: the agent sees it too (before `seen` is taken below).
    expect((await agentSocket.next('helpdesk.message.created', (e) => e.conversationId === conversationId && e.message?.direction === 'activity')).message.senderUserId).toBe(manager.userId);

    // Every event the sockets saw reached the webhook, signed, in the envelope.
    // (`helpdesk.notification.created` is the socket's own, spec 6.7: "It is not sent to helpdesk webhooks".)
    const seen = agentSocket.received.filter((r) => r.event.startsWith('helpdesk.') && r.event !== 'helpdesk.notification.created' && r.payload.conversationId === conversationId);
    expect(await agentSocket.next('helpdesk.notification.created', (n) => n.notificationType === 'assigned')).toMatchObject({ userId: agent.userId });
    const deadline = Date.now() + 20_000;
    while (receiver.hits('/live').filter((h) => h.json.data.conversationId === conversationId).length < seen.length && Date.now() < deadline) await Bun.sleep(50);
    const delivered = receiver.hits('/live').filter((h) => h.json.data.conversationId === conversationId);
    expect(delivered.every(signed)).toBe(true);
    expect(delivered.every((h) => h.headers.get('x-helpdesk-event') === h.json.event && h.json.data.type === h.json.event)).toBe(true);
    const key = (e: any) => JSON.stringify(e);
    expect(new Set(delivered.map((h) => key(h.json.data)))).toEqual(new Set(seen.map((r) => key(r.payload))));
  }, 90_000);
});
