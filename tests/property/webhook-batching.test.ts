import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { AppContext } from '../../adapters/http/context.ts';
import { uuidV7 } from '../../adapters/system.ts';
import { messagingDeps, messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { dispatchDeps } from '../../adapters/webhooks/jobs.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { createConnection } from '../../core/connections/connections.ts';
import { dueForFlush, openOrSlide, orderBatch, type BatchWindow } from '../../core/webhooks/batching.ts';
import { fanOut, flushBatch, FLUSH_QUEUE } from '../../core/webhooks/dispatch.ts';
import { createWebhook } from '../../core/webhooks/webhooks.ts';
import type { TestDatabase } from '../support/database.ts';
import { openTestContext, type TestContext } from '../support/context.ts';

/**
 * The batching window of connection webhooks (spec 6.3; issue 4 Tests: "the batching window
 * (random arrival times group exactly as the sliding-window rule says)").
 *
 * Spec 6.3: "With `messageGroupDelay` set (1 to 300 seconds) a contact's messages are held for a
 * sliding window per contact and delivered as one request in which `data` is an array of the
 * same objects". Issue 4 item 5: "in `messageTimestamp` order".
 *
 * The rule, as core/webhooks/batching.ts and dispatch.ts implement it: every arrival (the moment
 * the engine fans the event out) opens the window or slides its end to max(end, arrival + d) and
 * bumps its version; each arrival schedules a flush for its version at that end; a flush delivers
 * only if it carries the window's latest version and its time has reached the end. So with flushes
 * that run on time, the groups delivered are exactly the maximal runs of arrivals in which each
 * arrival comes less than d seconds after the previous one (a gap of exactly d: the flush due at
 * that instant and the arrival race; whichever the engine handles first decides, and both orders
 * are checked). Flushes that run late only ever merge neighbouring groups; none is early.
 */

const BASE = Date.UTC(2026, 10, 23, 9, 0, 0);

interface Arrival {
  /** Order of arrival. */
  n: number;
  /** When the engine saw it (ms). */
  at: number;
  /** The message's own time (seconds): ties common, not in arrival order. */
  messageTimestamp: number;
}

/** Random arrivals of one contact's messages for a window of `d` seconds: gaps around d on purpose. */
function arrivalsArb(d: number, maxLength = 30): fc.Arbitrary<Arrival[]> {
  const D = d * 1000;
  const gap = fc.oneof(
    { arbitrary: fc.integer({ min: 0, max: D - 1 }), weight: 5 },
    { arbitrary: fc.constantFrom(0, 1, D - 1, D, D + 1), weight: 3 },
    { arbitrary: fc.integer({ min: D, max: 3 * D }), weight: 2 },
  );
  return fc
    .array(fc.tuple(gap, fc.integer({ min: -3, max: 3 })), { minLength: 1, maxLength })
    .map((steps) => {
      let at = BASE;
      return steps.map(([g, skew], n) => {
        if (n > 0) at += g;
        return { n, at, messageTimestamp: Math.floor(at / 1000) + skew };
      });
    });
}

const delayArb = fc.oneof(fc.integer({ min: 1, max: 300 }), fc.constantFrom(1, 2, 300));

type TieOrder = 'flush-first' | 'arrival-first';

/** The model: maximal runs where each next arrival is less than d s after the previous one. */
function modelGroups(arrivals: Arrival[], d: number, tie: TieOrder): number[][] {
  const groups: number[][] = [];
  arrivals.forEach((a, i) => {
    const gap = i === 0 ? Infinity : a.at - arrivals[i - 1]!.at;
    const joins = tie === 'flush-first' ? gap < d * 1000 : gap <= d * 1000;
    if (joins) groups.at(-1)!.push(a.n);
    else groups.push([a.n]);
  });
  return groups;
}

/** Stable order by messageTimestamp, computed another way: timestamp by timestamp, arrival order within. */
function modelOrder<T extends { messageTimestamp: number }>(items: T[]): T[] {
  const timestamps = [...new Set(items.map((i) => i.messageTimestamp))].sort((a, b) => a - b);
  return timestamps.flatMap((t) => items.filter((i) => i.messageTimestamp === t));
}

interface Flush {
  members: number[];
  /** Order of the batch's `data`. */
  ordered: number[];
  at: number;
  closesAt: number;
  version: number;
}

/**
 * Drives the core as the engine does (fan-out = openOrSlide + schedule a flush for the new
 * version at closesAt + lag; flush job = dueForFlush then orderBatch), checking each step.
 */
function runEngine(arrivals: Arrival[], d: number, tie: TieOrder, lagOf: (job: number) => number): Flush[] {
  let batch: { window: BatchWindow; events: Arrival[] } | undefined;
  const jobs: { due: number; version: number; seq: number }[] = [];
  const flushes: Flush[] = [];
  let seq = 0;

  const runJobs = (until: number, inclusive: boolean) => {
    for (;;) {
      const ready = jobs.filter((j) => (inclusive ? j.due <= until : j.due < until)).sort((a, b) => a.due - b.due || a.seq - b.seq);
      const job = ready[0];
      if (!job) return;
      jobs.splice(jobs.indexOf(job), 1);
      const now = new Date(job.due);
      if (!batch) continue;
      const due = dueForFlush(batch.window, job.version, now);
      // Only the latest version, and only at or after the window's end.
      expect(due).toBe(job.version === batch.window.version && job.due >= batch.window.closesAt.getTime());
      if (!due) continue;
      const ordered = orderBatch(batch.events);
      flushes.push({ members: batch.events.map((e) => e.n), ordered: ordered.map((e) => e.n), at: job.due, closesAt: batch.window.closesAt.getTime(), version: job.version });
      batch = undefined;
    }
  };

  for (const a of arrivals) {
    runJobs(a.at, tie === 'flush-first');
    const before = batch?.window;
    const window = openOrSlide(before, new Date(a.at), d);
    if (!before) expect(window).toEqual({ closesAt: new Date(a.at + d * 1000), version: 1 });
    else {
      expect(window.version).toBe(before.version + 1);
      expect(window.closesAt.getTime()).toBe(Math.max(before.closesAt.getTime(), a.at + d * 1000));
    }
    batch = { window, events: [...(batch?.events ?? []), a] };
    jobs.push({ due: window.closesAt.getTime() + lagOf(seq), version: window.version, seq: seq++ });
  }
  runJobs(Infinity, true);
  expect(batch).toBeUndefined();
  return flushes;
}

describe('batching window: the pure core against the sliding-window rule', () => {
  test('on-time flushes deliver exactly the maximal runs with gaps below d, each at last arrival + d, in messageTimestamp order', () => {
    fc.assert(
      fc.property(
        delayArb.chain((d) => fc.tuple(fc.constant(d), arrivalsArb(d))),
        fc.constantFrom<TieOrder>('flush-first', 'arrival-first'),
        ([d, arrivals], tie) => {
          const flushes = runEngine(arrivals, d, tie, () => 0);
          const groups = modelGroups(arrivals, d, tie);
          expect(flushes.map((f) => f.members)).toEqual(groups);
          for (const f of flushes) {
            const last = arrivals[f.members.at(-1)!]!;
            expect(f.closesAt).toBe(last.at + d * 1000);
            expect(f.at).toBe(f.closesAt);
            // The flush that delivered was the one of the group's last arrival (its latest version).
            expect(f.version).toBe(f.members.length);
            expect(f.ordered).toEqual(modelOrder(f.members.map((n) => arrivals[n]!)).map((a) => a.n));
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('late flushes (a busy or restarted worker) only merge neighbouring groups; nothing is early, lost or sent twice', () => {
    fc.assert(
      fc.property(
        delayArb.chain((d) => fc.tuple(fc.constant(d), arrivalsArb(d), fc.array(fc.integer({ min: 0, max: 2 * d * 1000 }), { minLength: 1, maxLength: 30 }))),
        fc.constantFrom<TieOrder>('flush-first', 'arrival-first'),
        ([d, arrivals, lags], tie) => {
          const flushes = runEngine(arrivals, d, tie, (job) => lags[job % lags.length]!);
          // Every message exactly once, groups consecutive in arrival order.
          expect(flushes.flatMap((f) => f.members)).toEqual(arrivals.map((a) => a.n));
          // Each on-time group lies whole inside one delivered group.
          const groupOf = new Map(flushes.flatMap((f, g) => f.members.map((n) => [n, g] as const)));
          for (const group of modelGroups(arrivals, d, tie)) expect(new Set(group.map((n) => groupOf.get(n))).size).toBe(1);
          for (const f of flushes) {
            const last = arrivals[f.members.at(-1)!]!;
            // Never before the window's end (d after the last message it holds).
            expect(f.closesAt).toBe(last.at + d * 1000);
            expect(f.at).toBeGreaterThanOrEqual(f.closesAt);
            expect(f.ordered).toEqual(modelOrder(f.members.map((n) => arrivals[n]!)).map((a) => a.n));
          }
          // Two groups split only where the later one's first message arrived after the earlier was sent.
          for (let g = 1; g < flushes.length; g++) {
            const first = arrivals[flushes[g]!.members[0]!]!;
            if (tie === 'flush-first') expect(first.at).toBeGreaterThanOrEqual(flushes[g - 1]!.at);
            else expect(first.at).toBeGreaterThan(flushes[g - 1]!.at);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('dueForFlush: only the latest version, only at or after closesAt', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: -5_000, max: 5_000 }), (version, asked, offset) => {
        const closesAt = new Date(BASE);
        expect(dueForFlush({ closesAt, version }, asked, new Date(BASE + offset))).toBe(asked === version && offset >= 0);
      }),
      { numRuns: 2000 },
    );
  });

  test('openOrSlide: a window opens at version 1 and every arrival slides its end to max(end, arrival + d)', () => {
    fc.assert(
      fc.property(delayArb, fc.array(fc.integer({ min: -400_000, max: 400_000 }), { minLength: 1, maxLength: 20 }), (d, offsets) => {
        // Arrivals need not be in order (clocks of several workers): the end never moves back.
        let window: BatchWindow | undefined;
        offsets.forEach((offset, i) => {
          window = openOrSlide(window, new Date(BASE + offset), d);
          expect(window.version).toBe(i + 1);
          expect(window.closesAt.getTime()).toBe(Math.max(...offsets.slice(0, i + 1).map((o) => BASE + o + d * 1000)));
        });
      }),
      { numRuns: 1000 },
    );
  });

  test('orderBatch sorts by messageTimestamp and keeps arrival order among ties', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ messageTimestamp: fc.integer({ min: 1_763_000_000, max: 1_763_000_006 }), id: fc.uuid() }), { maxLength: 40 }), (items) => {
        const copy = items.map((i) => ({ ...i }));
        const ordered = orderBatch(items);
        expect(ordered).toEqual(modelOrder(items));
        // The input is left as it was.
        expect(items).toEqual(copy);
      }),
      { numRuns: 2000 },
    );
  });
});

// ------------------------------------------------------------------------------------------
// fanOut and flushBatch on real stores: the held batch, the flush jobs and the deliveries
// ------------------------------------------------------------------------------------------

let database: TestDatabase;
let testContext: TestContext;
let ctx: AppContext;
let actor: Actor;
let connectionId: string;
/** The engine's clock, moved by the test. */
let now = BASE;

beforeAll(async () => {
  testContext = await openTestContext({ clock: { now: () => new Date(now) } });
  ({ ctx, database } = testContext);
  ({ actor, connectionId } = await messagingUnitOfWork(ctx).transaction(async (stores) => {
    const owner = await bootstrapOwner(stores, ctx, { email: `batching-${crypto.randomUUID().slice(0, 8)}@example.com`, workspace: 'Batching', plan: 'PRO' });
    const actor: Actor = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] };
    const connection = await createConnection(stores, messagingDeps(ctx), actor, { name: 'batching', driver: 'sandbox' });
    return { actor, connectionId: connection.id };
  }));
}, 60_000);

afterAll(async () => {
  await testContext?.close();
}, 60_000);

/** The flush jobs enqueued for this contact: id, version and wait. */
async function flushJobs(webhookId: string, remoteJid: string) {
  const { rows } = await sql<{ id: string; version: number; delay: number }>`
    select id, (data->>'version')::int as version, extract(epoch from start_after - created_on)::float8 as delay
    from pgboss.job where name = ${FLUSH_QUEUE} and data->>'webhookId' = ${webhookId} and data->>'remoteJid' = ${remoteJid}`.execute(database.db);
  return rows.map((r) => ({ id: r.id, version: Number(r.version), delay: Number(r.delay) }));
}

async function logEvent(remoteJid: string, a: Arrival, keyId: string): Promise<string> {
  const id = uuidV7.next();
  const data = {
    key: { id: keyId, remoteJid, fromMe: false },
    pushName: 'Bia',
    status: 'DELIVERY_ACK',
    messageType: 'conversation',
    message: { conversation: `message ${a.n}` },
    messageTimestamp: a.messageTimestamp,
    source: 'ios',
    isAiMessage: false,
  };
  await database.db
    .insertInto('events')
    .values({ id, workspace_id: actor.workspaceId, connection_id: connectionId, event: 'messages.upsert', remote_jid: remoteJid, payload: { event: 'messages.upsert', connectionId, remoteJid, sender: '15550100000', data }, created_at: new Date(a.at) })
    .execute();
  return id;
}

describe('batching window: fanOut and flushBatch on real stores', () => {
  test('random arrivals of one contact: flush jobs for every version, exactly the model groups delivered, data in messageTimestamp order', async () => {
    const uow = messagingUnitOfWork(ctx);
    const deps = dispatchDeps(ctx);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }).chain((d) => fc.tuple(fc.constant(d), arrivalsArb(d, 10))),
        async ([d, arrivals]) => {
          const webhook = await uow.transaction((stores) =>
            createWebhook(stores, ctx, actor, { url: 'http://receiver.invalid/batched', events: ['messages.upsert'], connections: [connectionId], messageGroupDelay: d }),
          );
          const remoteJid = `55119${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}@s.whatsapp.net`;
          const seen = new Set<string>();
          const pending: { due: number; version: number }[] = [];
          const eventIds: string[] = [];
          const keyIds: string[] = [];

          // A flush job runs at its due time (on time; due jobs before an arrival at the same instant).
          const runDue = async (until: number) => {
            pending.sort((a, b) => a.due - b.due);
            while (pending[0] && pending[0].due <= until) {
              const job = pending.shift()!;
              now = job.due;
              await uow.transaction((stores) => flushBatch(stores, deps, { webhookId: webhook.id, connectionId, remoteJid, version: job.version }));
            }
          };

          try {
            for (const a of arrivals) {
              await runDue(a.at);
              now = a.at;
              const keyId = `3EB0${a.n}${crypto.randomUUID().slice(0, 8)}`;
              eventIds.push(await logEvent(remoteJid, a, keyId));
              keyIds.push(keyId);
              await uow.transaction((stores) => fanOut(stores, deps, eventIds.at(-1)!));
              // Replaying the fan-out (a retried job) changes nothing.
              await uow.transaction((stores) => fanOut(stores, deps, eventIds.at(-1)!));
              // Exactly one new flush job, for the window's new version, due at its end (d from now).
              const fresh = (await flushJobs(webhook.id, remoteJid)).filter((j) => !seen.has(j.id));
              expect(fresh.length).toBe(1);
              const batch = await database.db.selectFrom('webhook_batches').selectAll().where('webhook_id', '=', webhook.id).where('remote_jid', '=', remoteJid).executeTakeFirstOrThrow();
              expect(fresh[0]!.version).toBe(batch.version);
              expect(new Date(batch.closes_at).getTime()).toBe(a.at + d * 1000);
              expect(Math.abs(fresh[0]!.delay - d)).toBeLessThan(0.01);
              seen.add(fresh[0]!.id);
              pending.push({ due: a.at + fresh[0]!.delay * 1000, version: fresh[0]!.version });
            }
            await runDue(Infinity);

            // Nothing held any more; every message went out once, grouped as the model says.
            expect(await database.db.selectFrom('webhook_batches').selectAll().where('webhook_id', '=', webhook.id).execute()).toEqual([]);
            const deliveries = await database.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhook.id).orderBy('created_at').execute();
            const groups = modelGroups(arrivals, d, 'flush-first');
            expect(deliveries.map((row) => row.event_ids.map((id) => eventIds.indexOf(id)).sort((x, y) => x - y))).toEqual(groups);
            deliveries.forEach((row, g) => {
              const body = JSON.parse(row.body);
              expect(row.state).toBe('PENDING');
              expect(row.event).toBe('messages.upsert');
              expect(body).toMatchObject({ event: 'messages.upsert', connectionId, remoteJid, sender: '15550100000' });
              // `data` is always an array for a batching webhook, even of one message.
              expect(Array.isArray(body.data)).toBe(true);
              const expected = modelOrder(groups[g]!.map((n) => arrivals[n]!));
              expect(body.data.map((m: { key: { id: string } }) => m.key.id)).toEqual(expected.map((a) => keyIds[a.n]));
              expect(row.event_ids).toEqual(expected.map((a) => eventIds[a.n]!));
            });
          } finally {
            await uow.transaction((stores) => stores.webhooks.delete(webhook.id));
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  test('a flush that runs before its window closes is scheduled again, and the batch goes out at the end', async () => {
    // The queue counts a job's wait from its transaction's start, so a flush can run a little
    // early; it must neither deliver early nor drop the batch.
    const uow = messagingUnitOfWork(ctx);
    const deps = dispatchDeps(ctx);
    const webhook = await uow.transaction((stores) =>
      createWebhook(stores, ctx, actor, { url: 'http://receiver.invalid/early', events: ['messages.upsert'], connections: [connectionId], messageGroupDelay: 5 }),
    );
    const remoteJid = `55118${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}@s.whatsapp.net`;
    try {
      now = BASE + 10_000_000;
      const eventId = await logEvent(remoteJid, { n: 0, at: now, messageTimestamp: Math.floor(now / 1000) }, '3EB0EARLY');
      await uow.transaction((stores) => fanOut(stores, deps, eventId));
      const [first] = await flushJobs(webhook.id, remoteJid);
      expect(first!.version).toBe(1);

      now += 4_990;
      expect(await uow.transaction((stores) => flushBatch(stores, deps, { webhookId: webhook.id, connectionId, remoteJid, version: 1 }))).toBeUndefined();
      expect(await database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhook.id).execute()).toEqual([]);
      const again = (await flushJobs(webhook.id, remoteJid)).filter((j) => j.id !== first!.id);
      expect(again).toHaveLength(1);
      expect(again[0]!.version).toBe(1);
      expect(Math.abs(again[0]!.delay - 0.01)).toBeLessThan(0.005);

      now += 10;
      expect(await uow.transaction((stores) => flushBatch(stores, deps, { webhookId: webhook.id, connectionId, remoteJid, version: 1 }))).toBeDefined();
      expect(await database.db.selectFrom('webhook_deliveries').select('event_ids').where('webhook_id', '=', webhook.id).execute()).toEqual([{ event_ids: [eventId] }]);
      expect(await database.db.selectFrom('webhook_batches').selectAll().where('webhook_id', '=', webhook.id).execute()).toEqual([]);
    } finally {
      await uow.transaction((stores) => stores.webhooks.delete(webhook.id));
    }
  });
});
