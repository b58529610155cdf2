import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { EventEmitter } from 'node:events';
import type { AnyMessageContent, MiscMessageGenerationOptions, WAMessage } from 'baileys';
import type { AppContext } from '../../adapters/http/context.ts';
import { messagingDeps, messagingStores, messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { driverEventsFor } from '../../adapters/connections/driver-events.ts';
import { createBaileysDriver, networkIdFor, clientMessageIdOf, type BaileysDriver, type BaileysSocket, type BaileysSocketConfig } from '../../adapters/drivers/baileys/index.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { applySessionUpdate, createConnection } from '../../core/connections/connections.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import { acceptSend } from '../../core/messaging/send.ts';
import { driverView } from '../../core/messaging/deliver.ts';
import { deliverNow } from '../support/sends.ts';
import { watchedByWebhook } from '../support/connections.ts';
import { openTestContext, type TestContext } from '../support/context.ts';
import { MovableClock } from '../support/movable-clock.ts';
import { sendQueue } from '../../adapters/postgres/repositories/send-queue.ts';
import { createSender } from '../../core/messaging/deliver.ts';
import { IN_DOUBT_GRACE_SECONDS, SEND_LEASE_SECONDS } from '../../core/messaging/send-record.ts';
import { waitFor } from '../support/wait.ts';

/**
 * Issue 24 ("never twice"), Baileys: "choose the message id before sending and recognise our own
 * echo (`fromMe`) on reconnect". The driver gives each send a network id built from our message id
 * (`messageId` in Baileys' send options); when the worker died after the network took the send
 * but before recording it, the echo of that message (`messages.upsert`, `fromMe`) settles the
 * PENDING message as the worker would have (network id, SENT, one credit, one `send.message`),
 * and the retried job sends nothing. The driver runs on a stand-in socket (the network cannot be
 * reached from here); the service's own use cases and stores are real.
 */
class FakeSocket implements BaileysSocket {
  readonly ev = new EventEmitter();
  user: { id: string } | undefined;
  readonly sent: Array<{ jid: string; content: AnyMessageContent; options?: MiscMessageGenerationOptions }> = [];
  /** Calls answered before the worker dies; from then on every call reaches the network and its answer is lost. */
  answersLeft = Infinity;
  constructor(readonly config: BaileysSocketConfig) {}
  /** As Baileys: the message goes out under `options.messageId` when given. */
  async sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage> {
    this.sent.push({ jid, content, ...(options && { options }) });
    if (this.answersLeft-- <= 0) return new Promise(() => {});
    const id = options?.messageId ?? `3EB0${crypto.randomUUID().replace(/-/g, '').slice(0, 18).toUpperCase()}`;
    return { key: { remoteJid: jid, fromMe: true, id }, message: { conversation: (content as { text?: string }).text ?? '' }, messageTimestamp: Math.floor(Date.now() / 1000), status: 1 };
  }
  async sendPresenceUpdate() {}
  async requestPairingCode() {
    return 'K7QW2PLX';
  }
  async logout() {}
  end() {}
  open() {
    this.user = { id: '5511912345678:12@s.whatsapp.net' };
    this.ev.emit('connection.update', { connection: 'open' });
  }
  /** The network hands our own message back (a reconnect's sync of messages sent from this account). */
  echo(remoteJid: string, id: string, text: string) {
    this.ev.emit('messages.upsert', { type: 'append', messages: [{ key: { remoteJid, fromMe: true, id }, message: { conversation: text }, messageTimestamp: Math.floor(Date.now() / 1000) }] });
  }
}

let testContext: TestContext;
let ctx: AppContext;
let driver: BaileysDriver;
const sockets: FakeSocket[] = [];
let actor: { userId: string; workspaceId: string; roles: ['OWNER'] };
let connectionId: string;
/** A sandbox line of another workspace (the attacker's target). */
let other: { actor: typeof actor; connectionId: string };
const uow = () => messagingUnitOfWork(ctx);
const stores = () => messagingStores(ctx.db, ctx);
const clock = new MovableClock();

beforeAll(async () => {
  testContext = await openTestContext({ clock });
  ctx = testContext.ctx;
  driver = createBaileysDriver({
    db: ctx.db,
    owner: 'settle-worker',
    socketFactory: (config) => {
      const socket = new FakeSocket(config);
      sockets.push(socket);
      return socket;
    },
  });
  (ctx.drivers as Map<string, NetworkDriver>).set('baileys', driver);
  const deps = messagingDeps(ctx);
  const line = async (email: string, driverName: string) =>
    uow().transaction(async (s) => {
      const owner = await bootstrapOwner(s, ctx, { email, workspace: email, plan: 'PRO' });
      const who = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] as ['OWNER'] };
      const created = await createConnection(s, deps, who, { name: driverName, driver: driverName });
      await applySessionUpdate(s, deps, created.id, { event: 'connect' });
      await applySessionUpdate(s, deps, created.id, { event: 'opened', phoneNumber: '5511912345678' });
      return { actor: who, connectionId: created.id };
    });
  ({ actor, connectionId } = await line(`settle-${crypto.randomUUID().slice(0, 6)}@example.com`, 'baileys'));
  other = await line(`other-${crypto.randomUUID().slice(0, 6)}@example.com`, 'sandbox');
  // The tests count the connection's events: a webhook reads them, so they are logged.
  await watchedByWebhook(ctx.db, actor.workspaceId, [connectionId]);
  const connection = (await stores().connections.find(connectionId))!;
  await driver.connect(driverView(connection), driverEventsFor(ctx, connectionId));
  socket().open();
});

afterAll(async () => {
  await driver?.shutdown();
  await testContext.close();
});

const socket = () => sockets.at(-1)!;

async function accept(who: typeof actor, onConnection: string, to: string, text: string) {
  const { message } = await uow().transaction((s) => acceptSend(s, messagingDeps(ctx), who, onConnection, { to, content: { kind: 'text', text } }));
  return message;
}

const consumed = async (workspaceId: string) => {
  const rows = await ctx.db.selectFrom('credit_reservations').select(['consumed']).where('workspace_id', '=', workspaceId).execute();
  return rows.reduce((sum, r) => sum + r.consumed, 0);
};
const eventsAbout = async (event: string, externalId: string) => {
  const rows = await ctx.db.selectFrom('events').select('payload').where('event', '=', event).where('connection_id', '=', connectionId).execute();
  return rows.filter((r) => JSON.stringify(r.payload).includes(externalId)).length;
};
const rowsWithNetworkId = async (externalId: string) => (await ctx.db.selectFrom('messages').select('id').where('external_id', '=', externalId).execute()).length;

/** The worker's network call, then its death: the network took the send, nothing was recorded. */
async function sendAndDie(message: { id: string; remoteJid: string; content: unknown }) {
  const connection = (await stores().connections.find(connectionId))!;
  const outgoing = { to: message.remoteJid, content: message.content as any, clientMessageId: message.id };
  // The socket opened in beforeAll; the driver marks the session open from its event queue.
  return waitFor(() => driver.send(driverView(connection), outgoing).catch((error: { code?: string }) => (error.code === 'not_connected' ? undefined : Promise.reject(error))), { what: 'the session to open' });
}

describe('Baileys: our own echo settles a send the worker never recorded', () => {
  test('the network id is chosen from our message id before sending, and read back from it', () => {
    const id = '01936f1e-8b7c-7def-8123-456789abcdef';
    expect(networkIdFor(id)).toBe('3EB001936F1E8B7C7DEF8123456789ABCDEF');
    expect(clientMessageIdOf(networkIdFor(id)!)).toBe(id);
    // Ids Baileys makes itself (22 or 40 characters) name no message of ours.
    expect(clientMessageIdOf('3EB0A1B2C3D4E5F6A7B8C9')).toBeUndefined();
    expect(clientMessageIdOf(`3EB0${'A'.repeat(36)}`)).toBeUndefined();
    expect(networkIdFor('not-a-uuid')).toBeUndefined();
  });

  test('SENT by its echo, with its network id, one credit and one send.message; the retried job sends nothing', async () => {
    const message = await accept(actor, connectionId, '+5511988880001', 'in doubt');
    const before = await consumed(actor.workspaceId);
    const result = await sendAndDie(message);
    const networkId = networkIdFor(message.id)!;
    expect(socket().sent.at(-1)!.options?.messageId).toBe(networkId);
    expect(result.externalId).toBe(networkId);
    expect((await stores().messages.get(message.id))!.status).toBe('PENDING');

    // Reconnected: the network hands our message back.
    socket().echo(message.remoteJid, networkId, 'in doubt');
    const settled = await waitFor(async () => {
      const m = await stores().messages.get(message.id);
      return m?.status === 'SENT' ? m : undefined;
    }, { what: 'the echo to settle the send' });
    expect(settled.externalId).toBe(networkId);
    expect(await consumed(actor.workspaceId)).toBe(before + 1);
    expect(await eventsAbout('send.message', networkId)).toBe(1);
    expect(await eventsAbout('messages.update', networkId)).toBe(1);
    // Settled, not stored again as a message sent from the phone.
    expect(await rowsWithNetworkId(networkId)).toBe(1);

    // The dead worker's job, retried: nothing to send, nothing recorded twice.
    const sends = socket().sent.length;
    expect(await deliverNow(ctx, [message.id])).toEqual([]);
    expect(socket().sent.length).toBe(sends);
    // A second echo changes nothing either.
    socket().echo(message.remoteJid, networkId, 'in doubt');
    await Bun.sleep(200);
    expect(await consumed(actor.workspaceId)).toBe(before + 1);
    expect(await eventsAbout('send.message', networkId)).toBe(1);
    expect(await rowsWithNetworkId(networkId)).toBe(1);
  });

  test('recorded by the worker first, the echo changes nothing', async () => {
    const message = await accept(actor, connectionId, '+5511988880002', 'recorded');
    const before = await consumed(actor.workspaceId);
    expect(await deliverNow(ctx, [message.id])).toEqual([]);
    const networkId = networkIdFor(message.id)!;
    expect((await stores().messages.get(message.id))!.externalId).toBe(networkId);
    socket().echo(message.remoteJid, networkId, 'recorded');
    await Bun.sleep(200);
    expect((await stores().messages.get(message.id))!.status).toBe('SENT');
    expect(await consumed(actor.workspaceId)).toBe(before + 1);
    expect(await eventsAbout('send.message', networkId)).toBe(1);
    expect(await rowsWithNetworkId(networkId)).toBe(1);
  });

  test('an echo naming a PENDING message of another workspace settles nothing there', async () => {
    // An attacker holding this workspace's phone crafts a message id from another workspace's message.
    const victim = await accept(other.actor, other.connectionId, '+5511988880003', 'not yours');
    const before = await consumed(other.actor.workspaceId);
    const forged = networkIdFor(victim.id)!;
    socket().echo('5511988880003@s.whatsapp.net', forged, 'forged');
    // Stored as any message sent from the phone of this connection…
    await waitFor(async () => ((await rowsWithNetworkId(forged)) === 1 ? true : undefined), { what: 'the echo stored as a message of its own' });
    const stored = await ctx.db.selectFrom('messages').selectAll().where('external_id', '=', forged).executeTakeFirstOrThrow();
    expect(stored.connection_id).toBe(connectionId);
    expect(stored.id).not.toBe(victim.id);
    // …and the other workspace's message is untouched: still PENDING, no network id, no credit used.
    const after = (await stores().messages.get(victim.id))!;
    expect(after.status).toBe('PENDING');
    expect(after.externalId).toBeNull();
    expect(await consumed(other.actor.workspaceId)).toBe(before);
  });
});

/**
 * The crash run on Baileys (issue 24: "the same for the Baileys driver against its fake socket"):
 * 150 sends to 30 contacts; the worker dies twice with a batch on the wire (the socket takes the
 * calls and the answers never come back), time passes its lease, and the session reconnects on
 * the next worker, whose sync hands our own messages back (`fromMe`). Each message reaches the
 * network once, none is lost, none stays PENDING, each costs one credit.
 */
describe('Baileys: the worker dies twice mid-batch', () => {
  const TOTAL = 150;

  /** One worker's turn on the queue; `answers` calls are answered before it dies (Infinity: it lives). */
  async function workerTurn(answers: number) {
    const owner = `baileys-worker-${crypto.randomUUID()}`;
    const queue = sendQueue(ctx.db);
    const now = clock.now();
    const seconds = (n: number) => new Date(now.getTime() + n * 1000);
    const { claimed, givenUp } = await queue.claimDue(owner, now, seconds(SEND_LEASE_SECONDS), seconds(IN_DOUBT_GRACE_SECONDS), 1000);
    const sender = createSender(uow(), messagingDeps(ctx), { owner, queue });
    await sender.giveUp(givenUp);
    socket().answersLeft = answers;
    const delivered = sender.deliver(claimed);
    if (answers === Infinity) expect(await delivered).toEqual([]);
    else await waitFor(() => (socket().answersLeft < 0 ? true : undefined), { what: 'a batch on the wire when the worker dies' });
    return claimed.length;
  }

  /** The session reconnects on another worker: the network hands back what this account sent. */
  async function reconnectSync(ids: string[]) {
    socket().answersLeft = Infinity;
    for (const { jid, options } of socket().sent) socket().echo(jid, options!.messageId!, 'sync');
    await waitFor(
      async () => {
        const taken = new Set(socket().sent.map((s) => clientMessageIdOf(s.options!.messageId!)));
        const rows = await ctx.db.selectFrom('messages').select(['id', 'status']).where('id', 'in', ids).execute();
        return rows.every((r) => !taken.has(r.id) || r.status !== 'PENDING') ? true : undefined;
      },
      { what: 'the echoes to settle what the network took' },
    );
  }

  test(`${TOTAL} sends, two deaths with sends on the wire: each message reaches the network once, none lost or PENDING, one credit each`, async () => {
    const before = await consumed(actor.workspaceId);
    const ids: string[] = [];
    for (let i = 0; i < TOTAL; i++) ids.push((await accept(actor, connectionId, `+55119777${String(10_000 + (i % 30))}`, `crash ${i}`)).id);
    const sentBefore = socket().sent.length;

    await workerTurn(10); // dies with a wave of first-of-chat sends on the wire
    await reconnectSync(ids);
    clock.advance((SEND_LEASE_SECONDS + 1) * 1000); // its lease lapses: what it never started goes to the next
    await workerTurn(15); // dies too
    clock.advance((SEND_LEASE_SECONDS + 1) * 1000);
    await reconnectSync(ids);
    for (let turn = 0; turn < 10; turn++) {
      const pending = await ctx.db.selectFrom('messages').select('id').where('id', 'in', ids).where('status', '=', 'PENDING').execute();
      if (pending.length === 0) break;
      clock.advance((IN_DOUBT_GRACE_SECONDS + 1) * 1000);
      await workerTurn(Infinity);
    }

    const perMessage = new Map<string, number>();
    for (const { options } of socket().sent.slice(sentBefore)) {
      const id = clientMessageIdOf(options!.messageId!)!;
      perMessage.set(id, (perMessage.get(id) ?? 0) + 1);
    }
    expect([...perMessage.values()].filter((n) => n !== 1)).toEqual([]);
    expect(ids.every((id) => perMessage.get(id) === 1)).toBe(true);
    const statuses = await ctx.db.selectFrom('messages').select(['status', 'send_state']).where('id', 'in', ids).execute();
    expect(statuses.every((r) => r.status === 'SENT' && r.send_state === null)).toBe(true);
    expect(await consumed(actor.workspaceId)).toBe(before + TOTAL);
  }, 120_000);
});
