import { beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { driverEventsFor } from '../../adapters/connections/driver-events.ts';
import type { ReceivedMessage } from '../../core/messaging/incoming.ts';
import { HOOK_TIMEOUT, useTestService } from '../support/service.ts';
import { useEventWatch } from '../support/connections.ts';

/**
 * Dedupe of received messages on a real database (issue 3 Tests: "dedupe (replayed provider
 * callbacks store each message once)"; item 4: "stored, deduplicated on the network message id,
 * and published as domain events"; spec 2.13: "`key.id` | Network message id. Deduplicate on it.").
 *
 * Random sequences of provider deliveries go through the same entry point every driver uses
 * (`driverEventsFor(ctx, connectionId).message`): new messages, replays of earlier ones (same
 * network id, possibly a different body, as a provider retry may re-serialize), and batches
 * delivered concurrently with `Promise.all`. The model is a map from network id to the bodies
 * it was delivered with; the system must hold exactly one row and exactly one published event
 * (`messages.upsert`, or `send.message` for the account's own messages) per distinct id, with
 * the body of the first delivery that won.
 */

const service = useTestService();
const eventWatch = useEventWatch(service);
let connectionId: string;

beforeAll(async () => {
  const owner = await service.bootstrap({ plan: 'PRO' });
  const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'dedupe' } });
  connectionId = created.body.id;
  // The property counts the connection's events: a webhook reads them, so they are logged.
  await eventWatch.watch(owner.token, connectionId, ['messages.upsert', 'send.message']);
  const connected = await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey: owner.token });
  expect(connected.body.status).toBe('CONNECTED');
}, HOOK_TIMEOUT);

const POOL = 6;

interface Model {
  /** Network id → the texts it may have been stored with (one when the first delivery was alone). */
  stored: Map<string, Set<string>>;
}

interface Real {
  prefix: string;
}

interface Delivery {
  index: number;
  variant: number;
}

const externalIdOf = (r: Real, index: number) => `${r.prefix}.${index}`;
/** The account's own messages (typed on the phone) are deduped the same way. */
const fromMeOf = (index: number) => index % 3 === 2;
const textOf = (d: Delivery) => `message ${d.index} body ${d.variant}`;

function received(r: Real, d: Delivery): ReceivedMessage {
  return {
    externalId: externalIdOf(r, d.index),
    remoteJid: `55119000000${d.index % 3}@s.whatsapp.net`,
    fromMe: fromMeOf(d.index),
    pushName: 'Contact',
    messageType: 'conversation',
    node: {},
    text: textOf(d),
    timestamp: 1_750_000_000 + d.index,
    source: 'android',
    isAiMessage: false,
  };
}

async function verify(m: Model, r: Real): Promise<void> {
  const db = service.runtime.ctx.db;
  const rows = await db.selectFrom('messages').select(['external_id', 'content', 'direction']).where('connection_id', '=', connectionId).where('external_id', 'like', `${r.prefix}.%`).execute();
  const events = await db
    .selectFrom('events')
    .select(['event', 'payload'])
    .where('connection_id', '=', connectionId)
    .where('event', 'in', ['messages.upsert', 'send.message'])
    .execute();
  const ours = events
    .map((e) => ({ event: e.event, payload: (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload) as any }))
    .filter((e) => String(e.payload.data.key.id).startsWith(`${r.prefix}.`));

  // Exactly one row and one event per distinct network id.
  expect(rows.map((row) => row.external_id).sort()).toEqual([...m.stored.keys()].sort());
  expect(ours.map((e) => e.payload.data.key.id).sort()).toEqual([...m.stored.keys()].sort());
  for (const row of rows) {
    const id = row.external_id!;
    const index = Number(id.slice(r.prefix.length + 1));
    const content = (typeof row.content === 'string' ? JSON.parse(row.content) : row.content) as any;
    // The body is that of a delivery that won, never a mix and never overwritten by a replay.
    expect(m.stored.get(id)!.has(content.message.conversation)).toBe(true);
    expect(row.direction).toBe(fromMeOf(index) ? 'outbound' : 'inbound');
    const event = ours.find((e) => e.payload.data.key.id === id)!;
    expect(event.event).toBe(fromMeOf(index) ? 'send.message' : 'messages.upsert');
    // The event carries what was stored.
    expect(event.payload.data).toEqual(content);
  }
}

function remember(m: Model, r: Real, batch: Delivery[]): void {
  // Deliveries of an id not yet stored: any one of them in this batch may win.
  const fresh = new Map<string, Set<string>>();
  for (const d of batch) {
    const id = externalIdOf(r, d.index);
    if (m.stored.has(id)) continue;
    if (!fresh.has(id)) fresh.set(id, new Set());
    fresh.get(id)!.add(textOf(d));
  }
  for (const [id, texts] of fresh) m.stored.set(id, texts);
}

class DeliverOne implements fc.AsyncCommand<Model, Real> {
  constructor(readonly delivery: Delivery) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await driverEventsFor(service.runtime.ctx, connectionId).message(received(r, this.delivery));
    remember(m, r, [this.delivery]);
    await verify(m, r);
  }
  toString = () => `deliver(${this.delivery.index}#${this.delivery.variant})`;
}

class DeliverConcurrently implements fc.AsyncCommand<Model, Real> {
  constructor(readonly batch: Delivery[]) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const events = driverEventsFor(service.runtime.ctx, connectionId);
    // Every delivery is acknowledged (a provider retries what is not), replays included.
    await Promise.all(this.batch.map((d) => events.message(received(r, d))));
    remember(m, r, this.batch);
    await verify(m, r);
  }
  toString = () => `concurrently(${this.batch.map((d) => `${d.index}#${d.variant}`).join(', ')})`;
}

const deliveryArb = fc.record({ index: fc.integer({ min: 0, max: POOL - 1 }), variant: fc.integer({ min: 0, max: 2 }) });

describe('dedupe on the network message id (real database)', () => {
  test('random deliveries, replays and concurrent batches: each distinct message stored once, published once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands(
          [
            deliveryArb.map((d) => new DeliverOne(d)),
            fc.array(deliveryArb, { minLength: 2, maxLength: 5 }).map((batch) => new DeliverConcurrently(batch)),
            // The same message several times at once: the classic provider retry storm.
            fc.tuple(deliveryArb, fc.integer({ min: 2, max: 4 })).map(([d, n]) => new DeliverConcurrently(Array.from({ length: n }, (_, i) => ({ ...d, variant: (d.variant + i) % 3 })))),
          ],
          { maxCommands: 15 },
        ),
        async (cmds) => {
          // A fresh id space per run: the model starts empty.
          const setup = () => ({ model: { stored: new Map() }, real: { prefix: `DEDUPE.${crypto.randomUUID()}` } });
          await fc.asyncModelRun(setup, cmds);
        },
      ),
      { numRuns: 25 },
    );
  }, 300_000);

  test('the same network id on two connections is two messages (dedupe is per connection)', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const other = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'other' } });
    await service.call('POST', `/v3/connections/${other.body.id}/connect`, { apikey: owner.token });
    const id = `SHARED.${crypto.randomUUID()}`;
    const message = received({ prefix: 'x' }, { index: 0, variant: 0 });
    await driverEventsFor(service.runtime.ctx, connectionId).message({ ...message, externalId: id });
    await driverEventsFor(service.runtime.ctx, other.body.id).message({ ...message, externalId: id });
    await driverEventsFor(service.runtime.ctx, other.body.id).message({ ...message, externalId: id });
    const rows = await service.runtime.ctx.db.selectFrom('messages').select('connection_id').where('external_id', '=', id).execute();
    expect(rows.map((r) => r.connection_id).sort()).toEqual([connectionId, other.body.id].sort());
  });
});
