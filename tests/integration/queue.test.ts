import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { JobQueue } from '../../adapters/queue/queue.ts';
import { openTestDatabase } from '../support/database.ts';

/**
 * The queue adapter on the service's own database (ARCHITECTURE.md: pg-boss on Postgres and on
 * PGlite; enqueue inside the caller's transaction — the transactional outbox).
 */
let database: Awaited<ReturnType<typeof openTestDatabase>>;
let queue: JobQueue;
const handled: Array<{ n: number; retryCount: number }> = [];

beforeAll(async () => {
  database = await openTestDatabase();
  queue = await JobQueue.start(database, { pollingIntervalSeconds: 0.5 });
  await queue.work([
    {
      queue: 'test.outbox',
      retryLimit: 2,
      retryDelay: 1,
      retryBackoff: false,
      expireInSeconds: 30,
      async handle(data: { n: number; failFirst?: boolean }, job) {
        handled.push({ n: data.n, retryCount: job.retryCount });
        if (data.failFirst && job.retryCount === 0) throw new Error('first attempt fails');
      },
    },
  ]);
});

afterAll(async () => {
  await queue.stop();
  await database.close();
});

async function until(condition: () => boolean, timeoutMs = 15_000) {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await Bun.sleep(100);
  }
}

describe('pg-boss behind the outbox', () => {
  test('a job enqueued in a committed transaction runs; one in a rolled-back transaction never does', async () => {
    await database.db.transaction().execute(async (trx) => {
      await queue.outbox(trx).enqueue('test.outbox', { n: 1 });
    });
    await expect(
      database.db.transaction().execute(async (trx) => {
        await queue.outbox(trx).enqueue('test.outbox', { n: 2 });
        throw new Error('the change fails after enqueuing');
      }),
    ).rejects.toThrow('the change fails');
    await until(() => handled.some((h) => h.n === 1));
    // A sleep: a rolled-back job leaves nothing to wait for; only time can show it ran anyway.
    await Bun.sleep(1500);
    expect(handled.filter((h) => h.n === 2)).toEqual([]);
  });

  test('a failing handler is retried', async () => {
    await database.db.transaction().execute((trx) => queue.outbox(trx).enqueue('test.outbox', { n: 3, failFirst: true }));
    await until(() => handled.filter((h) => h.n === 3).length >= 2);
    expect(handled.filter((h) => h.n === 3).map((h) => h.retryCount)).toEqual([0, 1]);
  });

  test('a dedupe key makes a second enqueue of the same work a no-op (the job id is derived from it)', async () => {
    await database.db.transaction().execute(async (trx) => {
      const outbox = queue.outbox(trx);
      await outbox.enqueue('test.outbox', { n: 4 }, { dedupeKey: 'same', startAfterSeconds: 1 });
      await outbox.enqueue('test.outbox', { n: 4 }, { dedupeKey: 'same', startAfterSeconds: 1 });
    });
    await until(() => handled.some((h) => h.n === 4));
    // A sleep: a duplicate would be a second job due at about the same time; give it that time.
    await Bun.sleep(1500);
    expect(handled.filter((h) => h.n === 4)).toHaveLength(1);
  });
});
