import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { AppContext } from '../../adapters/http/context.ts';
import { messagingDeps, messagingStores, messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { applySessionUpdate, createConnection } from '../../core/connections/connections.ts';
import { DriverError, type NetworkDriver } from '../../core/connections/driver.ts';
import { acceptSend } from '../../core/messaging/send.ts';
import { receiveReceipt } from '../../core/messaging/receive.ts';
import { openTestContext, type TestContext } from '../support/context.ts';
import { claimNow, deliverNow, sendRecord } from '../support/sends.ts';
import { watchedByWebhook } from '../support/connections.ts';
import { createSender } from '../../core/messaging/deliver.ts';
import { sendQueue } from '../../adapters/postgres/repositories/send-queue.ts';

/**
 * The worker sends a claimed batch of queued sends side by side and records those the network
 * took together (core `createSender`). Batching must not change what happens to any
 * one message (issue 3: "the driver send runs on the queue with retries; delivery receipts
 * update the message"; spec 3.6: "each sent message consumes one credit"): each is recorded
 * once with its own network id, a failure fails or retries only its own send, and a receipt that
 * overtook its send is applied. The use cases run on real stores (no worker: the test decides).
 */
let testContext: TestContext;
let ctx: AppContext;
let actor: { userId: string; workspaceId: string; roles: ['OWNER'] };
let connectionId: string;
const uow = () => messagingUnitOfWork(ctx);

beforeAll(async () => {
  testContext = await openTestContext();
  ctx = testContext.ctx;
  const deps = messagingDeps(ctx);
  await uow().transaction(async (stores) => {
    const owner = await bootstrapOwner(stores, ctx, { email: `batch-${crypto.randomUUID().slice(0, 6)}@example.com`, workspace: 'Batch', plan: 'PRO' });
    actor = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] };
    const created = await createConnection(stores, deps, actor, { name: 'sandbox', driver: 'sandbox' });
    await applySessionUpdate(stores, deps, created.id, { event: 'connect' });
    connectionId = (await applySessionUpdate(stores, deps, created.id, { event: 'opened', phoneNumber: '15550100000' }))!.id;
  });
  // The test counts the connection's events: a webhook reads them, so they are logged.
  await watchedByWebhook(ctx.db, actor.workspaceId, [connectionId]);
});

afterAll(async () => {
  await testContext.close();
});

async function accept(to: string, text: string): Promise<string> {
  const { message } = await uow().transaction((stores) => acceptSend(stores, messagingDeps(ctx), actor, connectionId, { to, content: { kind: 'text', text } }));
  return message.id;
}

const stored = async (id: string) => (await messagingStores(ctx.db, ctx).messages.get(id))!;
const sandboxId = (id: string) => `SANDBOX.${id.replace(/-/g, '').toUpperCase()}`;
const consumed = async () => {
  const rows = await ctx.db.selectFrom('credit_reservations').select(['consumed']).where('workspace_id', '=', actor.workspaceId).execute();
  return rows.reduce((sum, r) => sum + r.consumed, 0);
};
const sendEvents = async (ids: string[]) => {
  const rows = await ctx.db.selectFrom('events').select('payload').where('event', '=', 'send.message').where('connection_id', '=', connectionId).execute();
  return rows.filter((r) => ids.some((id) => JSON.stringify(r.payload).includes(sandboxId(id)))).length;
};

/** The sandbox network, with some sends answered as the test says. */
function depsWith(send: (original: NetworkDriver['send']) => NetworkDriver['send']) {
  const deps = messagingDeps(ctx);
  const sandbox = deps.drivers.get('sandbox')!;
  return { ...deps, drivers: new Map([...deps.drivers, ['sandbox', { ...sandbox, send: send(sandbox.send.bind(sandbox)) }]]) };
}

test('a batch: each message is sent and recorded once, with its own id, credit and send.message; a receipt that overtook one is applied', async () => {
  const ids = [await accept('+5511900000001', 'one'), await accept('+5511900000002', 'two'), await accept('+5511900000003', 'three')];
  const already = await accept('+5511900000004', 'sent before');
  await deliverNow(ctx, [already]);
  const connection = (await messagingStores(ctx.db, ctx).connections.find(connectionId))!;
  await uow().transaction((stores) =>
    receiveReceipt(stores, messagingDeps(ctx), connection, { externalId: sandboxId(ids[1]!), remoteJid: '5511900000002@s.whatsapp.net', status: 'READ' }),
  );
  const consumedBefore = await consumed();
  const sent: string[] = [];
  const deps = depsWith((send) => async (c, m, media) => {
    sent.push(m.clientMessageId!);
    return send(c, m, media);
  });

  // `ids[0]` named twice and a message already SENT (no longer in the queue) send nothing more.
  const errors = await deliverNow(ctx, [ids[0]!, ids[1]!, already, ids[2]!, ids[0]!], deps);

  expect(errors).toEqual([]);
  expect(sent.sort()).toEqual([...ids].sort());
  for (const id of ids) expect((await stored(id)).externalId).toBe(sandboxId(id));
  expect((await stored(ids[0]!)).status).toBe('SENT');
  expect((await stored(ids[1]!)).status).toBe('READ');
  expect((await stored(ids[2]!)).status).toBe('SENT');
  expect(await consumed()).toBe(consumedBefore + 3);
  expect(await sendEvents([...ids, already])).toBe(4);
  expect(await ctx.db.selectFrom('held_receipts').selectAll().execute()).toEqual([]);
});

test('a retryable failure puts only its own send back in the queue, for later; a permanent one fails its message and refunds it; the others are recorded', async () => {
  const good = await accept('+5511900000011', 'good');
  const flaky = await accept('+5511900000012', 'flaky');
  const absent = await accept('+999100000013', 'not on the network');
  const lastTry = await accept('+5511900000014', 'flaky');
  const deps = depsWith((send) => async (c, m, media) => {
    if (m.content.kind === 'text' && m.content.text === 'flaky') throw new DriverError('throttled', 130429, true);
    return send(c, m, media);
  });
  const consumedBefore = await consumed();

  const before = Date.now();
  const errors = await deliverNow(ctx, [good, flaky, absent, { id: lastTry, attempts: 4 }], deps);

  expect(errors).toEqual([]);
  expect((await stored(good)).status).toBe('SENT');
  expect((await stored(flaky)).status).toBe('PENDING');
  // Back in the queue, its first retry due after 2 s; sends that ended left the queue.
  const retry = await sendRecord(ctx, flaky);
  expect(retry).toMatchObject({ send_state: 'queued', send_attempts: 1, send_owner: null });
  expect(new Date(retry.send_due_at!).getTime()).toBeGreaterThanOrEqual(before + 2000);
  for (const id of [good, absent, lastTry]) expect((await sendRecord(ctx, id)).send_state).toBeNull();
  expect(await stored(absent)).toMatchObject({ status: 'FAILED', error: { code: 'not_on_network' } });
  // The last attempt of a retryable failure is final.
  expect(await stored(lastTry)).toMatchObject({ status: 'FAILED', error: { code: 130429 } });
  expect(await consumed()).toBe(consumedBefore + 1);
  const refunded = await ctx.db.selectFrom('credit_reservations').select(['status', 'refunded']).where('reason', 'in', [`message:${absent}`, `message:${lastTry}`]).execute();
  expect(refunded).toEqual([
    { status: expect.any(String), refunded: 1 },
    { status: expect.any(String), refunded: 1 },
  ]);

  // Its retry goes out.
  expect(await deliverNow(ctx, [{ id: flaky, attempts: 1 }])).toEqual([]);
  expect((await stored(flaky)).status).toBe('SENT');
});

test('a send the batch cannot record with the others stays in flight (never sent again) with its error; the others are recorded', async () => {
  const first = await accept('+5511900000021', 'first');
  const second = await accept('+5511900000022', 'second');
  // A network that answers both with one id: the second cannot be stored (a network id is unique per connection).
  const deps = depsWith(() => async () => ({ externalId: `SANDBOX.SAME-${first}`, status: 'SENT' }));

  const errors = await deliverNow(ctx, [first, second], deps);

  expect(errors).toHaveLength(1);
  expect(errors[0]!.message).toContain(second);
  expect(await stored(first)).toMatchObject({ status: 'SENT', externalId: `SANDBOX.SAME-${first}` });
  expect(await stored(second)).toMatchObject({ status: 'PENDING', externalId: null });
  // The network took it, so it is never sent again: when its lease lapses it waits in doubt for evidence.
  expect((await sendRecord(ctx, second)).send_state).toBe('in_flight');
});

test('a send whose media is not held (received media never fetched) fails for good, with its credit back, instead of retrying', async () => {
  const mediaId = crypto.randomUUID();
  await messagingStores(ctx.db, ctx).media.insert({
    id: mediaId,
    workspaceId: actor.workspaceId,
    connectionId,
    origin: 'received',
    driverRef: null,
    mimetype: 'image/jpeg',
    fileName: null,
    size: null,
    createdAt: new Date(),
  });
  const { message } = await uow().transaction((stores) =>
    acceptSend(stores, messagingDeps(ctx), actor, connectionId, { to: '+5511900000031', content: { kind: 'image', image: { mediaId } } }),
  );

  expect(await deliverNow(ctx, [message.id])).toEqual([]);

  expect(await stored(message.id)).toMatchObject({ status: 'FAILED', error: { code: 'media_missing' } });
  const reservation = await ctx.db.selectFrom('credit_reservations').select(['consumed', 'refunded']).where('reason', '=', `message:${message.id}`).executeTakeFirstOrThrow();
  expect(reservation).toEqual({ consumed: 0, refunded: 1 });
});

test('a contact receives the messages of a batch in the order they were accepted, while other chats go out side by side', async () => {
  const burst = [await accept('+5511900000041', 'first'), await accept('+5511900000041', 'second'), await accept('+5511900000041', 'third')];
  const other = await accept('+5511900000042', 'elsewhere');
  const calls: Array<{ id: string; at: 'start' | 'end' }> = [];
  const deps = depsWith((send) => async (c, m, media) => {
    calls.push({ id: m.clientMessageId!, at: 'start' });
    // The first of the burst is slow on the network: the rest of its chat must wait for it.
    if (m.clientMessageId === burst[0]) await Bun.sleep(40);
    const result = await send(c, m, media);
    calls.push({ id: m.clientMessageId!, at: 'end' });
    return result;
  });

  // Fetched in another order than they were accepted.
  const errors = await deliverNow(ctx, [burst[2]!, other, burst[0]!, burst[1]!], deps);

  expect(errors).toEqual([]);
  expect(calls.filter((c) => c.at === 'start' && burst.includes(c.id)).map((c) => c.id)).toEqual(burst);
  // One after another within the chat: the second starts only after the first ended.
  expect(calls.findIndex((c) => c.id === burst[1] && c.at === 'start')).toBeGreaterThan(calls.findIndex((c) => c.id === burst[0] && c.at === 'end'));
  // The other chat did not wait for the slow one.
  expect(calls.findIndex((c) => c.id === other && c.at === 'end')).toBeLessThan(calls.findIndex((c) => c.id === burst[0] && c.at === 'end'));
  for (const id of [...burst, other]) expect((await stored(id)).status).toBe('SENT');
});

test('two batches of one worker keep a chat in order: the later batch waits for the chat\'s send in the earlier one', async () => {
  const first = await accept('+5511900000051', 'first');
  const second = await accept('+5511900000051', 'second');
  const calls: Array<{ id: string; at: 'start' | 'end' }> = [];
  const deps = depsWith((send) => async (c, m, media) => {
    calls.push({ id: m.clientMessageId!, at: 'start' });
    if (m.clientMessageId === first) await Bun.sleep(40);
    const result = await send(c, m, media);
    calls.push({ id: m.clientMessageId!, at: 'end' });
    return result;
  });
  const owner = `test-worker-${crypto.randomUUID()}`;
  const sender = createSender(uow(), deps, { owner, queue: sendQueue(ctx.db) });
  const earlier = await claimNow(ctx, owner, [first], deps);
  const later = await claimNow(ctx, owner, [second], deps);

  expect(await Promise.all([sender.deliver(earlier), sender.deliver(later)])).toEqual([[], []]);

  expect(calls.findIndex((c) => c.id === second && c.at === 'start')).toBeGreaterThan(calls.findIndex((c) => c.id === first && c.at === 'end'));
  for (const id of [first, second]) expect((await stored(id)).status).toBe('SENT');
});
