import { afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { Manager } from 'socket.io-client';
import { broadcastHelpdeskEvent } from '../../plugins/helpdesk/realtime/broadcast.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { PRESENCE_COALESCE_MS, setHelpdeskAvailability } from '../../plugins/helpdesk/realtime/presence.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { connectHelpdesk, refusal, type TestSocket } from '../support/socket.ts';
import { connectedConnection, connectionInbox, conversationFromContact, messagesUntil, setInboxMembers, type Member, type Owner } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * The helpdesk websocket (spec 5.5, 6.7, 3.7) on a real service, with the real Socket.IO client:
 * path `/ws`, namespace `/helpdesk`, `apikey` in the query; automatic rooms; conversation
 * subscriptions; typing and read relays; presence with decay; routing of helpdesk events.
 */

const TTL_SECONDS = 2;
const TTL_MS = TTL_SECONDS * 1000;

let manager: Member;
/** A member of inbox A. */
let agent: Member;
/** A member of inbox B only. */
let outsider: Member;
let inboxA: string;
let inboxB: string;
let conversationId: string;
let messageId: string;
const open: TestSocket[] = [];

const service = useTestService({ env: { HELPDESK_PRESENCE_TTL_SECONDS: String(TTL_SECONDS) } });
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  manager = await memberWithToken(service, owner, 'MANAGER');
  agent = await memberWithToken(service, owner, 'AGENT');
  outsider = await memberWithToken(service, owner, 'AGENT');

  const connectionId = await connectedConnection(service, owner.token, 'support line');
  inboxA = await connectionInbox(service, owner.token, 'A', connectionId);
  const b = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: owner.token, body: { name: 'B', channelType: 'API' } });
  expect(b.status).toBe(201);
  inboxB = b.body.id;
  await setInboxMembers(service, owner.token, inboxA, [agent.userId]);
  await setInboxMembers(service, owner.token, inboxB, [outsider.userId]);

  // A contact writes on inbox A's connection: the worker opens a conversation.
  conversationId = (await conversationFromContact(service, owner.token, connectionId, '5511977770001', { text: 'Hello' })).id;
  messageId = (await messagesUntil(service, owner.token, conversationId, 1))[0].id;
}, HOOK_TIMEOUT);

afterEach(() => {
  for (const socket of open.splice(0)) socket.close();
});

async function connect(apikey: string, transports?: Array<'polling' | 'websocket'>): Promise<TestSocket> {
  const socket = await connectHelpdesk(service.url, apikey, { transports });
  open.push(socket);
  return socket;
}

/** Sent to the workspace room, which every member's socket is in: once a socket has it, everything emitted before has arrived too. */
async function barrier(...sockets: TestSocket[]): Promise<void> {
  const marker = crypto.randomUUID();
  await broadcastHelpdeskEvent(service.runtime.ctx.realtime!, { type: 'helpdesk.label.created', accountId: owner.workspaceId, marker });
  await Promise.all(sockets.map((s) => s.next('helpdesk.label.created', (p) => p.marker === marker)));
}

const eventsOf = (socket: TestSocket, event: string) => socket.received.filter((r) => r.event === event).map((r) => r.payload);

describe('connecting (spec 5.5)', () => {
  test('a good apikey connects, over long-polling and over websocket, and gets the presence snapshot', async () => {
    for (const transports of [['polling'], ['websocket']] as const) {
      const socket = await connect(owner.token, [...transports]);
      expect(socket.socket.connected).toBe(true);
      const snapshot = await socket.next('presence.update');
      expect(snapshot.users[owner.userId]).toBe('online');
    }
  });

  test('a bad, missing or revoked apikey fails the namespace with connect_error "unauthorized"', async () => {
    expect((await refusal(service.url, 'sk_live_not-a-real-key')).message).toBe('unauthorized');
    expect((await refusal(service.url, undefined)).message).toBe('unauthorized');

    const created = await service.call('POST', '/v3/api-tokens', { apikey: owner.token, body: { name: 'short-lived' } });
    expect(created.status).toBe(201);
    (await connect(created.body.token)).close();
    expect((await service.call('DELETE', `/v3/api-tokens/${created.body.id}`, { apikey: owner.token })).status).toBe(200);
    expect((await refusal(service.url, created.body.token)).message).toBe('unauthorized');
  });

  test('the refusal leaves the connection open: another namespace on it stays connected', async () => {
    const manager_ = new Manager(service.url, { path: '/ws', query: { apikey: 'sk_live_not-a-real-key' }, reconnection: false });
    const root = manager_.socket('/');
    const helpdesk = manager_.socket('/helpdesk');
    try {
      await new Promise<void>((resolve) => root.once('connect', () => resolve()));
      const error = await new Promise<Error>((resolve) => helpdesk.once('connect_error', resolve));
      expect(error.message).toBe('unauthorized');
      // A sleep: the root namespace must stay connected for a while; nothing signals that it did.
      await Bun.sleep(200);
      expect(root.connected).toBe(true);
      expect(manager_.engine.readyState).toBe('open');
    } finally {
      root.close();
      helpdesk.close();
    }
  });

  test('a key revoked while connected ends the session at the next heartbeat, even when the revocation\'s signal was lost', async () => {
    const created = await service.call('POST', '/v3/api-tokens', { apikey: owner.token, body: { name: 'revoked-live' } });
    const socket = await connect(created.body.token);
    expect(await socket.ask('presence:online')).toEqual({ ok: true });
    // Straight in the database, as if the service had crashed between the revocation's commit
    // and its access-change signal (helpdesk-live-access.test.ts covers the signal).
    await baseStores(service.runtime.ctx.db).tokens.delete(created.body.id);
    await Bun.sleep(1_100); // heartbeats closer than 1 s are not checked again
    const disconnected = new Promise<string>((resolve) => socket.socket.once('disconnect', resolve));
    expect(await socket.ask('presence:online')).toEqual({ ok: false, error: 'unauthorized' });
    expect(await disconnected).toBe('io server disconnect');
  });
});

describe('conversations (spec 6.7 client events)', () => {
  test('subscribe:conversation acks { ok: true } for who may see it; "conversation not found" otherwise', async () => {
    const [o, m, a, x] = await Promise.all([connect(owner.token), connect(manager.token), connect(agent.token), connect(outsider.token)]);
    expect(await o.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });
    expect(await m.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });
    expect(await a.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });
    // An Agent outside the conversation's inbox, a missing id, an id that names nothing.
    expect(await x.ask('subscribe:conversation', { conversationId })).toEqual({ ok: false, error: 'conversation not found' });
    expect(await o.ask('subscribe:conversation', { conversationId: crypto.randomUUID() })).toEqual({ ok: false, error: 'conversation not found' });
    expect(await o.ask('subscribe:conversation', { conversationId: 'nope' })).toEqual({ ok: false, error: 'conversation not found' });
    // Malformed payloads are refused, not thrown on.
    for (const payload of [undefined, null, 42, 'x', {}, { conversationId: 7 }]) {
      expect(await o.ask('subscribe:conversation', payload)).toEqual({ ok: false, error: 'invalid payload' });
    }
    expect(await a.ask('unsubscribe:conversation', { conversationId })).toEqual({ ok: true });
  });

  test('typing is relayed to the other agents of the conversation, never echoed to the sender, never from who cannot see it', async () => {
    const [o, a, x] = await Promise.all([connect(owner.token), connect(agent.token), connect(outsider.token)]);
    for (const s of [o, a]) expect(await s.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });

    expect(await x.ask('typing:start', { conversationId })).toEqual({ ok: false, error: 'conversation not found' });
    expect(await a.ask('typing:start', { conversationId })).toEqual({ ok: true });
    expect(await o.next('typing:start')).toEqual({ conversationId, userId: agent.userId });
    o.socket.emit('typing:stop', { conversationId }); // no acknowledgement asked: still relayed
    expect(await a.next('typing:stop')).toEqual({ conversationId, userId: owner.userId });

    await barrier(o, a, x);
    expect(eventsOf(o, 'typing:start')).toEqual([{ conversationId, userId: agent.userId }]);
    expect(eventsOf(a, 'typing:start')).toEqual([]);
    expect(eventsOf(o, 'typing:stop')).toEqual([]);
    expect(eventsOf(x, 'typing:start')).toEqual([]);
    expect(await a.ask('typing:start', { conversationId: 42 })).toEqual({ ok: false, error: 'invalid payload' });
  });

  test('read:up_to is relayed with the reader and the message', async () => {
    const [o, a] = await Promise.all([connect(owner.token), connect(agent.token)]);
    for (const s of [o, a]) expect(await s.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });
    expect(await a.ask('read:up_to', { conversationId, messageId })).toEqual({ ok: true });
    expect(await o.next('read:up_to')).toEqual({ conversationId, userId: agent.userId, messageId });
    expect(await a.ask('read:up_to', { conversationId })).toEqual({ ok: false, error: 'invalid payload' });
    await barrier(o, a);
    expect(eventsOf(a, 'read:up_to')).toEqual([]);
  });
});

describe('helpdesk events (spec 6.7 routing)', () => {
  test('an inbox event reaches its members and Managers and above, not an Agent of another inbox; once per socket', async () => {
    const [o, m, a, x] = await Promise.all([connect(owner.token), connect(manager.token), connect(agent.token), connect(outsider.token)]);
    // Subscribed and in the managers' room: still one copy.
    expect(await o.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });
    const event = { type: 'helpdesk.conversation.status_changed', accountId: owner.workspaceId, inboxId: inboxA, conversationId, fromStatus: 'OPEN', toStatus: 'RESOLVED', actorUserId: owner.userId };
    await broadcastHelpdeskEvent(service.runtime.ctx.realtime!, event);
    for (const s of [o, m, a]) expect(await s.next('helpdesk.conversation.status_changed')).toEqual(event);
    const otherInbox = { type: 'helpdesk.conversation.created', accountId: owner.workspaceId, inboxId: inboxB, conversationId: crypto.randomUUID() };
    await broadcastHelpdeskEvent(service.runtime.ctx.realtime!, otherInbox);
    for (const s of [o, m, x]) expect(await s.next('helpdesk.conversation.created')).toEqual(otherInbox);

    await barrier(o, m, a, x);
    expect(eventsOf(o, 'helpdesk.conversation.status_changed')).toHaveLength(1);
    expect(eventsOf(x, 'helpdesk.conversation.status_changed')).toEqual([]);
    expect(eventsOf(a, 'helpdesk.conversation.created')).toEqual([]);
  });

  test('a notification and a mention reach only their user; helpdesk.sla.missed reaches nobody; label events reach the workspace', async () => {
    const [o, m, a, x] = await Promise.all([connect(owner.token), connect(manager.token), connect(agent.token), connect(outsider.token)]);
    const hub = service.runtime.ctx.realtime!;
    const notification = { type: 'helpdesk.notification.created', accountId: owner.workspaceId, userId: agent.userId, notificationId: crypto.randomUUID(), notificationType: 'assigned', inboxId: inboxA, conversationId };
    await broadcastHelpdeskEvent(hub, notification);
    const mention = { type: 'helpdesk.mention.created', accountId: owner.workspaceId, mentionedUserId: outsider.userId, userId: owner.userId, inboxId: inboxA, conversationId };
    await broadcastHelpdeskEvent(hub, mention);
    await broadcastHelpdeskEvent(hub, { type: 'helpdesk.sla.missed', accountId: owner.workspaceId, inboxId: inboxA, conversationId, userId: agent.userId });
    expect(await a.next('helpdesk.notification.created')).toEqual(notification);
    expect(await x.next('helpdesk.mention.created')).toEqual(mention);

    await barrier(o, m, a, x);
    for (const s of [o, m, x]) expect(eventsOf(s, 'helpdesk.notification.created')).toEqual([]);
    for (const s of [o, m, a]) expect(eventsOf(s, 'helpdesk.mention.created')).toEqual([]);
    for (const s of [o, m, a, x]) expect(eventsOf(s, 'helpdesk.sla.missed')).toEqual([]);
  });
});

describe('presence (spec 3.7)', () => {
  const statusesOf = (socket: TestSocket, userId: string, from = 0) =>
    socket.received
      .slice(from)
      .filter((r) => r.event === 'presence.update')
      .map((r) => r.payload.users[userId]);
  /** Sockets of earlier tests may have left the member live: wait until they decayed. */
  const offlineFor = (observer: TestSocket, userId: string) => observer.next('presence.update', (p) => p.users[userId] === 'offline', { timeoutMs: 10 * TTL_MS });

  test('the snapshot on connect lists every member; another member connecting is announced', async () => {
    const observer = await connect(owner.token);
    const snapshot = await observer.next('presence.update');
    expect(Object.keys(snapshot.users).sort()).toEqual([owner.userId, manager.userId, agent.userId, outsider.userId].sort());
    for (const status of Object.values(snapshot.users)) expect(['online', 'busy', 'offline']).toContain(status as string);
    expect(snapshot.users[owner.userId]).toBe('online');

    const beat = setInterval(() => observer.socket.emit('presence:online'), 400);
    await offlineFor(observer, manager.userId);
    const before = observer.received.length;
    const m = await connect(manager.token);
    await observer.next('presence.update', (p) => p.users[manager.userId] === 'online', { after: before });
    // Availability chosen by the member (issue 7's PATCH calls this): busy while connected.
    await setHelpdeskAvailability(service.runtime.ctx, { userId: manager.userId, workspaceId: owner.workspaceId, roles: ['MANAGER'] }, 'busy');
    await observer.next('presence.update', (p) => p.users[manager.userId] === 'busy');
    const busy = observer.received.length;
    await setHelpdeskAvailability(service.runtime.ctx, { userId: manager.userId, workspaceId: owner.workspaceId, roles: ['MANAGER'] }, 'online');
    await observer.next('presence.update', (p) => p.users[manager.userId] === 'online', { after: busy });
    clearInterval(beat);
    m.close();
  }, 30_000);

  test('a reconnect within the TTL never shows offline; silence for the TTL decays to offline', async () => {
    const observer = await connect(owner.token);
    const beat = setInterval(() => observer.socket.emit('presence:online'), 400);
    try {
      await offlineFor(observer, outsider.userId);
      const from = observer.received.length;
      let first = await connect(outsider.token);
      await observer.next('presence.update', (p) => p.users[outsider.userId] === 'online', { after: from });
      const online = observer.received.findIndex((r, i) => i >= from && r.event === 'presence.update' && r.payload.users[outsider.userId] === 'online');
      // Reloads: disconnect and come back well within the TTL, for longer than the TTL in all.
      for (let i = 0; i < 3; i++) {
        first.close();
        await Bun.sleep(TTL_MS / 4);
        first = await connect(outsider.token);
        await Bun.sleep(TTL_MS / 4);
      }
      expect(statusesOf(observer, outsider.userId, online)).not.toContain('offline');
      expect(statusesOf(observer, outsider.userId, online).length).toBeGreaterThan(0);
      // Gone for good: offline, and not before the TTL since the last contact.
      const lastContact = Date.now();
      await connect(outsider.token).then((s) => s.close());
      first.close();
      await observer.next('presence.update', (p) => p.users[outsider.userId] === 'offline', { timeoutMs: 10 * TTL_MS, after: online });
      expect(Date.now() - lastContact).toBeGreaterThanOrEqual(TTL_MS);
    } finally {
      clearInterval(beat);
    }
  }, 30_000);

  test('members arriving together are announced together: a snapshot holds every change made while it waited', async () => {
    const arriving = await Promise.all(Array.from({ length: 6 }, () => memberWithToken(service, owner, 'AGENT')));
    const observer = await connect(owner.token);
    const beat = setInterval(() => observer.socket.emit('presence:online'), 400);
    try {
      await observer.next('presence.update');
      const from = observer.received.length;
      await Promise.all(arriving.map((member) => connect(member.token)));
      await observer.next('presence.update', (p) => arriving.every((member) => p.users[member.userId] === 'online'), { after: from });
      await Bun.sleep(2 * PRESENCE_COALESCE_MS);
      // One snapshot per arrival would be six (each of every member, to every socket).
      const updates = observer.received.slice(from).filter((r) => r.event === 'presence.update');
      expect(updates.length).toBeLessThanOrEqual(2);
    } finally {
      clearInterval(beat);
    }
  }, 30_000);
});
