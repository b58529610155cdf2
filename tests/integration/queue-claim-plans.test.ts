import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql, type CompiledQuery } from 'kysely';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { capturing, genericPlan } from '../support/statement-plans.ts';
import { sendQueue } from '../../adapters/postgres/repositories/send-queue.ts';
import { deliveryClaims } from '../../adapters/postgres/repositories/delivery-claims.ts';
import { pluginEventQueue } from '../../adapters/postgres/repositories/plugin-event-queue.ts';
import { pendingFanouts } from '../../adapters/postgres/repositories/webhook-store.ts';

/**
 * Every queue on a table is claimed by one statement that picks due rows in a subquery (`for
 * update skip locked`) and writes them. A pooled prepared statement ends up with the plan made
 * once for every limit (a generic plan), and a table that grew from nothing has no statistics
 * where autovacuum is off or has not run yet. Picked rows written through `in (subquery)` or a
 * join were then planned as a hash join over a scan of the whole table: every claim read every
 * row (every message ever sent, every delivery ever made). Each claim must find the picked rows
 * by their key, and read nothing more of its table when it picked none (most claims of
 * deliveries, which are born claimed by their fan-out). The tables here hold 10,000 rows and were
 * never analyzed.
 */

const ROWS = 10_000;
let database: TestDatabase;

beforeAll(async () => {
  database = await openTestDatabase();
  await database.db.transaction().execute(async (trx) => {
    // Rows of no workspace or connection: the foreign keys are not what this test is about.
    await sql`set local session_replication_role = replica`.execute(trx);
    await sql`insert into messages (id, workspace_id, connection_id, direction, remote_jid, kind, content, status, message_timestamp, created_at, updated_at)
      select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'outbound', g || '@s.whatsapp.net', 'text', '{}', 'SENT', now(), now(), now()
      from generate_series(1, ${ROWS}) g`.execute(trx);
    await sql`insert into webhook_deliveries (id, webhook_id, workspace_id, event, event_ids, body, state, attempts, created_at, updated_at)
      select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'messages.upsert', '{}', '{}', 'SUCCEEDED', 1, now(), now()
      from generate_series(1, ${ROWS}) g`.execute(trx);
    await sql`insert into plugin_event_queue (event_id, due_at) select gen_random_uuid(), now() + interval '1 hour' from generate_series(1, ${ROWS}) g`.execute(trx);
    await sql`insert into events (id, workspace_id, connection_id, event, payload, created_at)
      select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'messages.upsert', '{}', now() from generate_series(1, ${ROWS}) g`.execute(trx);
    await sql`insert into webhook_fanout (event_id) select id from events`.execute(trx);
  });
}, 60_000);

afterAll(async () => {
  await database.close();
});

const anHourAgo = () => new Date(Date.now() - 3_600_000);

describe('claims find the rows they picked by key, on tables never analyzed', () => {
  test('sends (the message rows)', async () => {
    const now = anHourAgo(); // nothing is due: the plan is what is read here
    const plan = await planOf((db) => sendQueue(db).claimDue('worker-a', now, new Date(now.getTime() + 12_000), new Date(now.getTime() + 20_000), 100));
    expectKeyed(plan, 'messages_pkey', 'messages_send_queue_idx');
  });

  test('webhook deliveries', async () => {
    const now = anHourAgo();
    const plan = await planOf((db) =>
      deliveryClaims(db).claim({ claimId: crypto.randomUUID(), due: now, wallClock: now, claimedUntil: new Date(), limit: 100, skipWebhooks: [] }),
    );
    expectKeyed(plan, 'webhook_deliveries_pkey', 'webhook_deliveries_due_idx');
  });

  test('plugin events', async () => {
    const plan = await planOf((db) => pluginEventQueue(db).claim({ claimId: crypto.randomUUID(), now: anHourAgo(), claimedUntil: new Date(), limit: 100 }));
    expectKeyed(plan, 'plugin_event_queue_pkey', 'plugin_event_queue_due_idx');
  });

  test('webhook fan-outs, with their events', async () => {
    // The events of the rows taken are read in the same statement, by their key as well. Taken rows are deleted: taken in a transaction rolled back, so the table keeps its rows.
    const statements: CompiledQuery[] = [];
    await database.db
      .transaction()
      .execute(async (trx) => {
        await pendingFanouts(capturing(trx, statements)).take(1);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    const plan = await genericPlan(database.db, statements[0]!);
    expect({ plan, seqScan: plan.includes('Seq Scan') }).toEqual({ plan, seqScan: false });
    expect(plan).toContain('webhook_fanout_pkey');
    expect(plan).toContain('events_pkey');
  });
});

describe('a claim that picks nothing reads nothing more of its table', () => {
  // Nothing is due an hour ago: each claim picks no row, and its write must not look for any.
  const claims: Array<[string, string, (db: typeof database.db) => Promise<unknown>]> = [
    ['sends', 'messages', (db) => sendQueue(db).claimDue('worker-a', anHourAgo(), new Date(), new Date(), 100)],
    ['webhook deliveries', 'webhook_deliveries', (db) => deliveryClaims(db).claim({ claimId: crypto.randomUUID(), due: anHourAgo(), wallClock: anHourAgo(), claimedUntil: new Date(), limit: 100, skipWebhooks: [] })],
    ['plugin events', 'plugin_event_queue', (db) => pluginEventQueue(db).claim({ claimId: crypto.randomUUID(), now: anHourAgo(), claimedUntil: new Date(), limit: 100 })],
  ];
  for (const [name, table, claim] of claims) {
    test(name, async () => {
      const plan = await planOf(claim, { run: true });
      // The write's own scans of the table (the picking scan goes by an alias: `on messages messages_1`).
      const scans = plan.split('\n').filter((line) => new RegExp(`Scan( using \\w+)? on ${table}( \\(|$)`).test(line));
      expect(scans.length).toBeGreaterThan(0);
      for (const scan of scans) expect(scan).toContain('(never executed)');
    });
  }
});

/** The generic plan of the first statement `claim` runs (`run`: executed, showing what ran). */
async function planOf(claim: (db: typeof database.db) => Promise<unknown>, options: { run?: boolean } = {}): Promise<string> {
  const statements: CompiledQuery[] = [];
  await claim(capturing(database.db, statements));
  return genericPlan(database.db, statements[0]!, options);
}

/** Read through the queue's index, the picked rows found again by the primary key; never the whole table. */
function expectKeyed(plan: string, primaryKey: string, queueIndex: string): void {
  expect({ plan, seqScan: plan.includes('Seq Scan') }).toEqual({ plan, seqScan: false });
  expect(plan).toContain(primaryKey);
  expect(plan).toContain(queueIndex);
}
