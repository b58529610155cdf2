import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { AppContext } from '../../adapters/http/context.ts';
import { messagingDeps, messagingStores, messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { driverEventsFor } from '../../adapters/connections/driver-events.ts';
import { createCloudApiDriver } from '../../adapters/drivers/cloud-api/index.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { applySessionUpdate, createConnection } from '../../core/connections/connections.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import { acceptSend } from '../../core/messaging/send.ts';
import { driverView } from '../../core/messaging/deliver.ts';
import { deliverNow } from '../support/sends.ts';
import { watchedByWebhook } from '../support/connections.ts';
import { startGraphSimulator, type GraphSimulator } from '../support/graph-simulator.ts';
import { openTestContext, type TestContext } from '../support/context.ts';
import { waitFor } from '../support/wait.ts';

/**
 * Issue 24 ("never twice"), Cloud API: "send our message id as `biz_opaque_callback_data` and
 * match the status callbacks that come back for a network id we never recorded". Here the worker
 * "dies" after the platform took a send (the driver's network call is made, its answer never
 * recorded); the platform's signed `statuses[]` callbacks, carrying our id, reach the service's
 * callback path (driver `callbacks.authentic` + `ingest`, then the core use cases on real
 * stores), settle the message as the worker would have, and the retried job sends nothing.
 */
let testContext: TestContext;
let ctx: AppContext;
let sim: GraphSimulator;
let receiver: ReturnType<typeof Bun.serve>;
let driver: NetworkDriver;
let actor: { userId: string; workspaceId: string; roles: ['OWNER'] };
let connectionId: string;
let other: { actor: typeof actor; connectionId: string };
/** Callbacks the service answered, by status code. */
const answers: number[] = [];
const uow = () => messagingUnitOfWork(ctx);
const stores = () => messagingStores(ctx.db, ctx);
const CONTACTS = ['447700900301', '447700900302', '447700900303', '447700900304', '447700900305'];

beforeAll(async () => {
  testContext = await openTestContext();
  ctx = testContext.ctx;
  sim = await startGraphSimulator();
  driver = createCloudApiDriver({ baseUrl: sim.baseUrl });
  (ctx.drivers as Map<string, NetworkDriver>).set('cloud-api', driver);
  // The service's provider callback path, reduced to what it does: authenticate, then ingest.
  receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (request) => {
      const id = new URL(request.url).pathname.split('/').at(-1)!;
      const connection = (await stores().connections.find(id))!;
      const raw = await request.text();
      if (!driver.callbacks!.authentic(driverView(connection), raw, Object.fromEntries(request.headers))) return new Response('unsigned', { status: 401 });
      await driver.callbacks!.ingest(driverView(connection), JSON.parse(raw), driverEventsFor(ctx, id));
      answers.push(200);
      return new Response('ok');
    },
  });
  const deps = messagingDeps(ctx);
  const line = async (email: string, name: string, credentials: Record<string, unknown>, driverName: string) =>
    uow().transaction(async (s) => {
      const owner = await bootstrapOwner(s, ctx, { email, workspace: email, plan: 'PRO' });
      const who = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] as ['OWNER'] };
      const created = await createConnection(s, deps, who, { name, driver: driverName, credentials });
      await applySessionUpdate(s, deps, created.id, { event: 'connect' });
      await applySessionUpdate(s, deps, created.id, { event: 'opened', phoneNumber: '15550104477' });
      return { actor: who, connectionId: created.id };
    });
  const credentials = { phoneNumberId: sim.phoneNumberId, businessAccountId: sim.businessAccountId, accessToken: sim.accessToken, appSecret: sim.appSecret, verifyToken: sim.verifyToken };
  ({ actor, connectionId } = await line(`official-${crypto.randomUUID().slice(0, 6)}@example.com`, 'official', credentials, 'cloud-api'));
  other = await line(`other-${crypto.randomUUID().slice(0, 6)}@example.com`, 'other', {}, 'sandbox');
  // The tests count the connection's events: a webhook reads them, so they are logged.
  await watchedByWebhook(ctx.db, actor.workspaceId, [connectionId]);
  sim.callbackUrl = `http://127.0.0.1:${receiver.port}/callbacks/${connectionId}`;
  // Each contact writes first: free text goes inside the 24-hour window (spec 3.4).
  for (const from of CONTACTS) expect((await sim.deliverIncoming(sim.callbackUrl, { from, type: 'text', text: { body: 'hi' } })).status).toBe(200);
});

afterAll(async () => {
  await sim?.stop();
  receiver?.stop(true);
  await testContext?.close();
});

async function accept(who: typeof actor, onConnection: string, to: string, text: string) {
  const { message } = await uow().transaction((s) => acceptSend(s, messagingDeps(ctx), who, onConnection, { to, content: { kind: 'text', text } }));
  return message;
}

/** The worker's network call, then its death: the platform took the send, nothing was recorded. */
async function sendAndDie(message: { id: string; remoteJid: string; content: unknown }) {
  const connection = (await stores().connections.find(connectionId))!;
  return driver.send(driverView(connection), { to: message.remoteJid, content: message.content as any, clientMessageId: message.id });
}

const consumed = async (workspaceId: string) => {
  const rows = await ctx.db.selectFrom('credit_reservations').select(['consumed']).where('workspace_id', '=', workspaceId).execute();
  return rows.reduce((sum, r) => sum + r.consumed, 0);
};
const statusEvents = async (externalId: string) => {
  const rows = await ctx.db.selectFrom('events').select(['event', 'payload']).where('connection_id', '=', connectionId).execute();
  return rows.filter((r) => JSON.stringify(r.payload).includes(externalId)).map((r) => `${r.event}:${(r.payload as any).data?.statuses?.[0]?.status ?? ''}`);
};
const status = async (id: string) => (await stores().messages.get(id))!;

describe('Cloud API: status callbacks carrying our id settle a send never recorded', () => {
  test('every send carries our message id as biz_opaque_callback_data; the callbacks bring it back', async () => {
    sim.statusCallbacks = { upTo: 'read', delayMs: 5 };
    const message = await accept(actor, connectionId, `+${CONTACTS[0]}`, 'tracked');
    expect(await deliverNow(ctx, [message.id])).toEqual([]);
    const wamid = (await status(message.id)).externalId!;
    const graph = sim.sent.find((m) => m.id === wamid)!;
    expect(graph.body.biz_opaque_callback_data).toBe(message.id);
    await sim.settle();
    expect(sim.statuses.filter((s) => s.id === wamid)).toEqual([
      { id: wamid, status: 'sent', bizOpaque: message.id, answer: 200 },
      { id: wamid, status: 'delivered', bizOpaque: message.id, answer: 200 },
      { id: wamid, status: 'read', bizOpaque: message.id, answer: 200 },
    ]);
    expect((await status(message.id)).status).toBe('READ');
  });

  test('the worker dies after the send: the `sent` callback settles it once (network id, one credit), and the retry sends nothing', async () => {
    sim.statusCallbacks = { upTo: 'delivered', delayMs: 30 };
    const message = await accept(actor, connectionId, `+${CONTACTS[1]}`, 'in doubt');
    const before = await consumed(actor.workspaceId);
    const { externalId: wamid } = await sendAndDie(message);
    expect((await status(message.id)).status).toBe('PENDING');

    const settled = await waitFor(async () => {
      const m = await status(message.id);
      return m.status === 'DELIVERED' ? m : undefined;
    }, { what: 'the callbacks to settle the send' });
    expect(settled.externalId).toBe(wamid);
    expect(await consumed(actor.workspaceId)).toBe(before + 1);
    // The platform's own statuses, published once each (official: no `send.message` of ours).
    expect(await statusEvents(wamid)).toEqual(['messages.update:sent', 'messages.update:delivered']);

    const sends = sim.sent.length;
    expect(await deliverNow(ctx, [message.id])).toEqual([]);
    expect(sim.sent.length).toBe(sends);
    expect(await consumed(actor.workspaceId)).toBe(before + 1);
    expect(sim.sendsByOpaque().get(message.id)).toBe(1);
  });

  test('the first callback to arrive is `delivered` (`sent` lost): settled DELIVERED, credit once', async () => {
    sim.statusCallbacks = { upTo: 'none', delayMs: 5 };
    const message = await accept(actor, connectionId, `+${CONTACTS[2]}`, 'sent lost');
    const before = await consumed(actor.workspaceId);
    const { externalId: wamid } = await sendAndDie(message);
    expect((await sim.deliverStatus(sim.callbackUrl!, { messageId: wamid, status: 'delivered' })).status).toBe(200);
    expect((await sim.deliverStatus(sim.callbackUrl!, { messageId: wamid, status: 'delivered' })).status).toBe(200);
    const m = await status(message.id);
    expect(m.status).toBe('DELIVERED');
    expect(m.externalId).toBe(wamid);
    expect(await consumed(actor.workspaceId)).toBe(before + 1);
  });

  test('the worker records and the callback settles at the same time: recorded once, one credit', async () => {
    sim.statusCallbacks = { upTo: 'sent', delayMs: 0 };
    const before = await consumed(actor.workspaceId);
    const messages = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => accept(actor, connectionId, `+${CONTACTS[3]}`, `race ${i}`)));
    await Promise.all(messages.map((m) => deliverNow(ctx, [m.id])));
    await sim.settle();
    for (const m of messages) {
      const stored = await status(m.id);
      expect(stored.status).toBe('SENT');
      expect(sim.sent.find((s) => s.id === stored.externalId)!.body.biz_opaque_callback_data).toBe(m.id);
      expect(await statusEvents(stored.externalId!)).toEqual(['messages.update:sent']);
    }
    expect(await consumed(actor.workspaceId)).toBe(before + messages.length);
  });

  test('a callback whose opaque data names a message of another workspace or connection settles nothing there', async () => {
    sim.statusCallbacks = { upTo: 'none', delayMs: 5 };
    // The attacker's own send, then a forged callback of their number naming the victim's message.
    const victim = await accept(other.actor, other.connectionId, '+447700900399', 'not yours');
    const mine = await accept(actor, connectionId, `+${CONTACTS[4]}`, 'mine');
    const before = await consumed(other.actor.workspaceId);
    const { externalId: wamid } = await sendAndDie(mine);
    expect((await sim.deliverStatus(sim.callbackUrl!, { messageId: wamid, status: 'sent', bizOpaque: victim.id })).status).toBe(200);
    const untouched = await status(victim.id);
    expect(untouched.status).toBe('PENDING');
    expect(untouched.externalId).toBeNull();
    expect(await consumed(other.actor.workspaceId)).toBe(before);
    // Nor is the attacker's own message settled by a callback that does not name it: the worker's retry sends it.
    expect((await status(mine.id)).status).toBe('PENDING');
    // Opaque data that is no id of ours at all is ignored too.
    expect((await sim.deliverStatus(sim.callbackUrl!, { messageId: wamid, status: 'delivered', bizOpaque: 'campaign-42' })).status).toBe(200);
    expect((await status(mine.id)).status).toBe('PENDING');
  });
});
