import { afterAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { openDatabase } from '../../adapters/postgres/database.ts';
import { freshDatabase, onPostgres } from '../support/database.ts';

/**
 * A pool connection's prepared statements keep the plans Postgres chose for them; a plan chosen
 * while a table was small is kept until the table's statistics change, which without autovacuum
 * is never. The pool's connections therefore live a limited time, busy or idle, and a new
 * connection plans its statements again (adapters/postgres/database.ts).
 */
describe.skipIf(!onPostgres)('the pool renews its connections (Postgres only: PGlite plans every statement anew)', () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  test('a connection in constant use is replaced after its lifetime, and its statements are prepared afresh', async () => {
    const fresh = await freshDatabase(process.env.TEST_DATABASE_URL!);
    drops.push(fresh.drop);
    const database = await openDatabase({ url: fresh.url, dataDir: 'memory://', poolSize: 1, connectionLifetimeSeconds: 1 });
    try {
      // A statement with a parameter (Bun's client prepares those), telling how often this
      // connection has run it (its plans so far, generic or custom).
      const backend = async () =>
        (
          await sql<{ pid: number; runs: number }>`select pg_backend_pid() as pid, (select (generic_plans + custom_plans)::int from pg_prepared_statements where statement like ${'%pg_backend_pid%'}) as runs`.execute(database.db)
        ).rows[0]!;
      const first = await backend();
      const seen = new Set([first.pid]);
      const started = Date.now();
      let last = first;
      let runs = 1;
      // Busy all along: one statement after another for two and a half lifetimes.
      while (Date.now() - started < 2500) {
        last = await backend();
        seen.add(last.pid);
        runs++;
      }
      expect(seen.size).toBeGreaterThan(1);
      // The last connection is not the first, and it prepared the statement itself: it has run
      // it fewer times than the pool has.
      expect(last.pid).not.toBe(first.pid);
      expect(last.runs).toBeGreaterThanOrEqual(1);
      expect(last.runs).toBeLessThan(runs);
    } finally {
      await database.close();
    }
  });

  test('unless told, a connection lives 20 s', async () => {
    const fresh = await freshDatabase(process.env.TEST_DATABASE_URL!);
    drops.push(fresh.drop);
    const database = await openDatabase({ url: fresh.url, dataDir: 'memory://', poolSize: 1 });
    try {
      const pid = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db)).rows[0]!.pid;
      const first = await pid();
      await Bun.sleep(1500);
      expect(await pid()).toBe(first);
    } finally {
      await database.close();
    }
  });
});
