import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql, type Kysely } from 'kysely';
import { overlappingTurns } from '../../adapters/connections/overlapping-turns.ts';
import { openDatabase, type DatabaseHandle } from '../../adapters/postgres/database.ts';
import type { Database } from '../../adapters/postgres/schema.ts';
import { freshDatabase, onPostgres, openTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * Group commit in overlapping turns (adapters/connections/overlapping-turns.ts, the receive
 * and send batchers' engine): a key's batches are written one after another, in the order
 * queued, and commit in that order, while the next turn's transaction is already open and writes
 * as soon as the one before has written; a batch that fails, as it writes or as it commits, is
 * written one by one before anything queued after it; and none of this needs a second
 * connection, so a pool of one (PGlite is always one) never waits on itself.
 */
interface Item {
  key: string;
  n: number;
  /** Fails as it is written. */
  poison?: boolean;
  /** Is written twice: its transaction fails as it commits (a deferred unique constraint). */
  late?: boolean;
  resolve(): void;
  reject(error: unknown): void;
}

/** The rows written, in the order they were written (an identity column). */
async function written(db: Kysely<Database>, key: string): Promise<number[]> {
  const { rows } = await sql<{ n: number }>`select n from turn_rows where key = ${key} order by id`.execute(db);
  return rows.map((r) => r.n);
}

/** Turns over `db` whose writes insert a row per item (slowly: batches pile up behind them), logging each step. */
function turnsOver(db: Kysely<Database>, options: { failOpenOnce?: boolean } = {}) {
  const log: string[] = [];
  let turn = 0;
  let failOpen = options.failOpenOnce ?? false;
  const turns = overlappingTurns<Item, number>(db, {
    maxBatch: 8,
    async open(trx) {
      const t = ++turn;
      await sql`select 1`.execute(trx);
      if (failOpen) {
        failOpen = false;
        throw new Error('the connection could not be read');
      }
      log.push(`open ${t}`);
      return t;
    },
    async write(trx, t, batch) {
      log.push(`write ${t}`);
      for (const item of batch) await writeItem(trx, item);
      await sql`select pg_sleep(0.003)`.execute(trx);
      log.push(`written ${t}`);
      return () => {
        log.push(`committed ${t}`);
        for (const item of batch) item.resolve();
      };
    },
    async fallback(batch) {
      log.push(`fallback ${batch.map((i) => i.n).join(',')}`);
      for (const item of batch) {
        try {
          await db.transaction().execute((trx) => writeItem(trx, item));
          item.resolve();
        } catch (error) {
          item.reject(error);
        }
      }
    },
    lost: (error) => log.push(`lost ${String(error)}`),
  });
  /** Queues `count` items (poisoned ones where asked), in waves of five, one wave per turn of the event loop. */
  async function queue(key: string, count: number, poisoned: number[] = [], late: number[] = []) {
    const outcomes: Array<Promise<void>> = [];
    for (let n = 0; n < count; n++) {
      const outcome = new Promise<void>((resolve, reject) => turns.add(key, { key, n, poison: poisoned.includes(n), late: late.includes(n), resolve, reject }));
      outcome.catch(() => {}); // told below, with the others (it may fail before the last is queued)
      outcomes.push(outcome);
      if (n % 5 === 4) await new Promise((resolve) => setImmediate(resolve));
    }
    return Promise.allSettled(outcomes);
  }
  return { log, queue };
}

async function createRows(db: Kysely<Database>) {
  await sql`create table turn_rows (id bigint generated always as identity primary key, key text not null, n int not null, constraint one_row_an_item unique (key, n) deferrable initially deferred)`.execute(db);
}

async function writeItem(trx: Kysely<Database>, item: Item) {
  await sql`insert into turn_rows (key, n) values (${item.key}, ${item.n})`.execute(trx);
  if (item.poison) throw new Error(`item ${item.n} cannot be written`);
  if (item.late) await sql`insert into turn_rows (key, n) values (${item.key}, ${item.n})`.execute(trx);
}

describe('overlapping turns', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
    await createRows(database.db);
  });
  afterAll(() => database.close());

  test("a key's batches are written one after another, in the order queued, and commit in that order", async () => {
    const { log, queue } = turnsOver(database.db);
    const outcomes = await queue('order', 120);
    expect(outcomes.every((o) => o.status === 'fulfilled')).toBe(true);
    expect(await written(database.db, 'order')).toEqual(Array.from({ length: 120 }, (_, n) => n));
    const at = (line: string) => log.indexOf(line);
    const turns = log.filter((l) => l.startsWith('write ')).map((l) => Number(l.slice(6)));
    expect(turns.length).toBeGreaterThan(1);
    // Each batch writes once the batch before it has written, and commits after it.
    for (const [i, t] of turns.entries()) {
      if (i === 0) continue;
      expect(at(`write ${t}`)).toBeGreaterThan(at(`written ${turns[i - 1]}`));
      expect(at(`committed ${t}`)).toBeGreaterThan(at(`committed ${turns[i - 1]}`));
    }
    if (onPostgres) {
      // And the next turn's transaction was open, its reads made, while the one before wrote;
      // it wrote while the one before committed.
      expect(turns.some((t, i) => i > 0 && at(`open ${t}`) < at(`written ${turns[i - 1]}`))).toBe(true);
      expect(turns.some((t, i) => i > 0 && at(`write ${t}`) < at(`committed ${turns[i - 1]}`))).toBe(true);
    }
    expect(log.filter((l) => l.startsWith('lost') || l.startsWith('fallback'))).toEqual([]);
  });

  test('a batch that fails is written one by one, before anything queued after it; only the item that cannot be written fails', async () => {
    const { log, queue } = turnsOver(database.db);
    const outcomes = await queue('failing', 60, [23]);
    expect(outcomes.flatMap((o, n) => (o.status === 'rejected' ? [n] : []))).toEqual([23]);
    expect(await written(database.db, 'failing')).toEqual(Array.from({ length: 60 }, (_, n) => n).filter((n) => n !== 23));
    expect(log.filter((l) => l.startsWith('fallback'))).toHaveLength(1);
    expect(log.filter((l) => l.startsWith('lost'))).toEqual([]);
  });

  test('a batch that fails as it commits, while the batch behind it has written, is written one by one first; the batch behind is written again after it', async () => {
    const { log, queue } = turnsOver(database.db);
    const outcomes = await queue('late', 60, [], [17]);
    expect(outcomes.flatMap((o, n) => (o.status === 'rejected' ? [n] : []))).toEqual([17]);
    expect(await written(database.db, 'late')).toEqual(Array.from({ length: 60 }, (_, n) => n).filter((n) => n !== 17));
    expect(log.filter((l) => l.startsWith('fallback'))).toHaveLength(1);
    expect(log.filter((l) => l.startsWith('lost'))).toEqual([]);
  });

  test('a turn whose transaction fails before it takes its batch still writes it, in its turn', async () => {
    const { log, queue } = turnsOver(database.db, { failOpenOnce: true });
    const outcomes = await queue('unread', 20);
    expect(outcomes.every((o) => o.status === 'fulfilled')).toBe(true);
    expect(await written(database.db, 'unread')).toEqual(Array.from({ length: 20 }, (_, n) => n));
    expect(log.filter((l) => l.startsWith('lost'))).toEqual([]);
  });
});

describe.skipIf(!onPostgres)('overlapping turns on a pool of one connection (Postgres only: PGlite is always one)', () => {
  let handle: DatabaseHandle;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const fresh = await freshDatabase(process.env.TEST_DATABASE_URL!);
    drop = fresh.drop;
    handle = await openDatabase({ url: fresh.url, dataDir: 'memory://', poolSize: 1 });
    await createRows(handle.db);
  });
  afterAll(async () => {
    await handle.close();
    await drop();
  });

  test('batches, one failing as it writes and one as it commits, are written in order: the turn waiting behind gives its connection back', async () => {
    const { log, queue } = turnsOver(handle.db);
    const outcomes = await queue('one', 90, [31], [62]);
    expect(outcomes.flatMap((o, n) => (o.status === 'rejected' ? [n] : []))).toEqual([31, 62]);
    expect(await written(handle.db, 'one')).toEqual(Array.from({ length: 90 }, (_, n) => n).filter((n) => n !== 31 && n !== 62));
    expect(log.filter((l) => l.startsWith('lost'))).toEqual([]);
  });
});
