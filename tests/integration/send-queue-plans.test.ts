import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { sendQueue } from '../../adapters/postgres/repositories/send-queue.ts';
import type { Database } from '../../adapters/postgres/schema.ts';
import type { SendQueue } from '../../core/messaging/send-queue.ts';
import { capturing } from '../support/statement-plans.ts';

/**
 * The send queue's per-batch statements (mark in flight, renew, requeue, release, resend, doubt)
 * name a batch's ids and guard each row's state and owner. They must find those rows by primary
 * key whatever the statistics say: with statistics taken while the queue was short, a guard
 * written `send_state = …` let Postgres walk the whole partial queue index instead (behind a
 * queue of 50,000 sends, 6 ms a statement instead of 0.4, on every batch). Here the statistics
 * are taken over 3,000 settled messages, then 3,000 sends are queued behind them, as when a big
 * campaign starts: each statement's plan is read with EXPLAIN.
 */

const SETTLED = 3000;
const QUEUED = 3000;
let database: TestDatabase;
let ids: string[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
  const db = database.db;
  // Rows of no workspace or connection: the foreign keys are not what this test is about.
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await insertMessages(trx, SETTLED, null);
    await sql`analyze messages`.execute(trx);
    await insertMessages(trx, QUEUED, 'claimed');
  });
  ids = (await sql<{ id: string }>`select id from messages where send_state is not null order by id limit 30`.execute(db)).rows.map((r) => r.id);
}, 60_000);

afterAll(async () => {
  await database.close();
});

describe('the send queue finds a batch by its ids', () => {
  test('every per-batch statement reads the primary key, never the whole queue index, even with statistics of a short queue', async () => {
    const statements: CompiledQuery[] = [];
    const queue = sendQueue(capturing(database.db, statements));
    const later = new Date(Date.now() + 60_000);
    await queue.renew('worker-a', ids, later);
    await queue.start('worker-a', ids.slice(0, 5), later, later);
    await queue.requeue('worker-a', [{ id: ids[5]!, dueAt: later, attempts: 1, hops: 0 }]);
    await queue.release('worker-a', ids.slice(6, 10), later);
    await queue.doubt('worker-a', ids.slice(10, 12), later);
    await queue.resend('worker-a', ids.slice(12, 14), later);
    expect(statements).toHaveLength(6);

    for (const statement of statements) {
      const plan = await database.db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${statement.sql}`, [...statement.parameters]));
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect({ statement: statement.sql, usesQueueIndex: text.includes('messages_send_queue_idx') }).toEqual({ statement: statement.sql, usesQueueIndex: false });
      expect({ statement: statement.sql, usesPrimaryKey: text.includes('messages_pkey') }).toEqual({ statement: statement.sql, usesPrimaryKey: true });
    }
  });

  test('the guards still hold: only the owner moves its sends, and only from the state named', async () => {
    const later = new Date(Date.now() + 60_000);
    const queue = sendQueue(database.db);
    const batch = ids.slice(20, 25);
    expect(await queue.renew('someone-else', batch, later)).toEqual(new Set());
    expect(await queue.start('worker-a', batch, later, later)).toEqual(new Set(batch));
    // In flight now: not claimed any more, so a second start moves nothing.
    expect(await queue.start('worker-a', batch, later, later)).toEqual(new Set());
    expect(await queue.stateOf(batch[0]!)).toBe('in_flight');
  });
});

describe('marking sends in flight', () => {
  // Migration 0022: "Marking a claimed send in flight rewrites its row in place (a HOT update: no index gets a new entry)."
  test('a send whose lease still lasts long enough is marked in place: the lease is kept and no index gets an entry', async () => {
    const now = Date.now();
    const batch = await claimedUntil(5, new Date(now + 12_000));
    const before = await leasesOf(batch);

    const { marked, hot, updated } = await countingUpdates((queue) => queue.start('worker-a', batch, new Date(now + 30_000), new Date(now + 8_000)));

    expect(marked).toEqual(new Set(batch));
    expect(await leasesOf(batch)).toEqual(before);
    expect({ updated, hot }).toEqual({ updated: 5, hot: 5 });
    expect(await sendQueue(database.db).stateOf(batch[0]!)).toBe('in_flight');
  });

  test('a send whose lease is running out gets a new one when it is marked in flight', async () => {
    const now = Date.now();
    const batch = await claimedUntil(3, new Date(now + 2_000));
    const renewed = new Date(now + 12_000);

    const { marked, hot, updated } = await countingUpdates((queue) => queue.start('worker-a', batch, renewed, new Date(now + 8_000)));

    expect(marked).toEqual(new Set(batch));
    expect(await leasesOf(batch)).toEqual(batch.map(() => renewed.getTime()));
    // A new lease is a new key in the queue index: not in place.
    expect({ updated, hot }).toEqual({ updated: 3, hot: 0 });
  });
});

/** `count` new sends, claimed by worker-a until `lease`. */
async function claimedUntil(count: number, lease: Date): Promise<string[]> {
  const ids = Array.from({ length: count }, () => crypto.randomUUID());
  await database.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await sql`insert into messages (id, workspace_id, connection_id, direction, remote_jid, kind, content, status, message_timestamp, created_at, updated_at, send_state, send_owner, send_due_at)
      select id, gen_random_uuid(), gen_random_uuid(), 'outbound', id || '@s.whatsapp.net', 'text', '{}', 'PENDING', now(), now(), now(), 'claimed', 'worker-a', ${lease.toISOString()}::timestamptz
      from unnest(${ids}::uuid[]) id`.execute(trx);
  });
  return ids;
}

async function leasesOf(ids: string[]): Promise<number[]> {
  const rows = await database.db.selectFrom('messages').select(['id', 'send_due_at']).where('id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, new Date(r.send_due_at!).getTime()]));
  return ids.map((id) => byId.get(id)!);
}

/** Runs `write` in a transaction of its own and counts the updates of `messages` it made, and how many were HOT (rewrote no index). */
async function countingUpdates(write: (queue: SendQueue) => Promise<Set<string>>): Promise<{ marked: Set<string>; updated: number; hot: number }> {
  return database.db.transaction().execute(async (trx) => {
    // Counted as a difference: the embedded database may still hold earlier transactions' counts here.
    const before = await updateCounts(trx);
    const marked = await write(sendQueue(trx));
    const after = await updateCounts(trx);
    return { marked, updated: after.updated - before.updated, hot: after.hot - before.hot };
  });
}

async function updateCounts(trx: Kysely<Database>): Promise<{ updated: number; hot: number }> {
  const { rows } = await sql<{ updated: string; hot: string }>`
    select pg_stat_get_xact_tuples_updated('messages'::regclass) as updated, pg_stat_get_xact_tuples_hot_updated('messages'::regclass) as hot`.execute(trx);
  return { updated: Number(rows[0]!.updated), hot: Number(rows[0]!.hot) };
}

async function insertMessages(db: Kysely<Database>, count: number, state: 'claimed' | null): Promise<void> {
  await sql`insert into messages (id, workspace_id, connection_id, direction, remote_jid, kind, content, status, message_timestamp, created_at, updated_at, send_state, send_owner, send_due_at)
    select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'outbound', g || '@s.whatsapp.net', 'text', '{}', ${state ? 'PENDING' : 'SENT'}, now(), now(), now(),
      ${state}, ${state ? 'worker-a' : null}, ${state ? sql`now()` : null}
    from generate_series(1, ${count}) g`.execute(db);
}
