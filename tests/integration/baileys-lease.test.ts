import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { LeaseKeeper, LeaseStore, revokedAction, type LeaseHolder } from '../../adapters/drivers/baileys/lease.ts';
import { ManualTimers } from '../support/manual-timers.ts';
import { FakeClock, onPostgres, openBaileysTestDb, type BaileysTestDb } from '../fixtures/baileys/support.ts';

let t: BaileysTestDb;
beforeAll(async () => {
  t = await openBaileysTestDb();
});
afterAll(async () => {
  await t.close();
});

const TTL = 30_000;

describe('session leases (moving a fake clock)', () => {
  test('two owners compete: only one acquires, the holder may acquire again', async () => {
    const id = await t.newConnection();
    const leases = new LeaseStore(t.db, new FakeClock());
    expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
    expect(await leases.acquire(id, 'worker-b', TTL)).toBe(false);
    expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
    expect((await leases.holder(id))!.owner).toBe('worker-a');
  });

  test('expiry lets the other take over; the old owner can then neither renew nor release', async () => {
    const id = await t.newConnection();
    const clock = new FakeClock();
    const leases = new LeaseStore(t.db, clock);
    expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
    clock.advance(TTL - 1);
    expect(await leases.acquire(id, 'worker-b', TTL)).toBe(false);
    clock.advance(2);
    expect(await leases.acquire(id, 'worker-b', TTL)).toBe(true);
    expect(await leases.renew(id, 'worker-a', TTL)).toBe(false);
    expect(await leases.release(id, 'worker-a')).toBe(false);
    expect((await leases.holder(id))!.owner).toBe('worker-b');
  });

  test('renewal keeps the lease past its first expiry', async () => {
    const id = await t.newConnection();
    const clock = new FakeClock();
    const leases = new LeaseStore(t.db, clock);
    expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
    for (let i = 0; i < 5; i++) {
      clock.advance(TTL / 2);
      expect(await leases.renew(id, 'worker-a', TTL)).toBe(true);
      expect(await leases.acquire(id, 'worker-b', TTL)).toBe(false);
    }
    const holder = (await leases.holder(id))!;
    expect(holder.expiresAt.getTime()).toBe(clock.now().getTime() + TTL);
  });

  test('release frees it at once', async () => {
    const id = await t.newConnection();
    const leases = new LeaseStore(t.db, new FakeClock());
    expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
    expect(await leases.release(id, 'worker-a')).toBe(true);
    expect(await leases.holder(id)).toBeUndefined();
    expect(await leases.acquire(id, 'worker-b', TTL)).toBe(true);
  });

  test('revoke takes the lease from its holder, says why, and frees the connection', async () => {
    const id = await t.newConnection();
    const leases = new LeaseStore(t.db, new FakeClock());
    expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
    await leases.revoke(id, 'logout');
    expect(revokedAction(await leases.holder(id))).toBe('logout');
    expect(await leases.renew(id, 'worker-a', TTL)).toBe(false);
    expect(await leases.acquire(id, 'worker-b', TTL)).toBe(true);
    expect(revokedAction(await leases.holder(id))).toBeUndefined();
  });

  test('a lease belongs to an existing connection and goes with it', async () => {
    const id = await t.newConnection();
    const leases = new LeaseStore(t.db, new FakeClock());
    await expect(leases.acquire(crypto.randomUUID(), 'worker-a', TTL)).rejects.toThrow();
    expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
    await t.db.deleteFrom('connections').where('id', '=', id).execute();
    expect(await leases.holder(id)).toBeUndefined();
  });
});

describe("session leases on the database's clock", () => {
  test('short TTLs expire by now()', async () => {
    const id = await t.newConnection();
    const leases = new LeaseStore(t.db);
    expect(await leases.acquire(id, 'worker-a', 150)).toBe(true);
    expect(await leases.acquire(id, 'worker-b', 150)).toBe(false);
    // Sleeps: the TTL running out on the database's clock is the subject.
    await Bun.sleep(250);
    expect(await leases.renew(id, 'worker-a', 150)).toBe(true); // not taken yet: still renewable
    await Bun.sleep(250);
    expect(await leases.acquire(id, 'worker-b', 10_000)).toBe(true);
    expect(await leases.renew(id, 'worker-a', 150)).toBe(false);
  });

  test('concurrent acquires: exactly one winner', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await t.newConnection();
      const leases = new LeaseStore(t.db);
      const owners = Array.from({ length: 8 }, (_, i) => `worker-${i}`);
      const results = await Promise.all(owners.map((owner) => leases.acquire(id, owner, TTL)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await leases.holder(id))!.owner).toBe(owners[results.indexOf(true)]!);
    }
  });

  test.skipIf(!onPostgres)('concurrent acquires from separate connection pools (separate workers) on Postgres', async () => {
    const { openDatabase } = await import('../../adapters/postgres/database.ts');
    // Each worker has its own pool to the same database, as separate processes would.
    const dbUrl = await currentDatabaseUrl();
    const workers = await Promise.all(Array.from({ length: 4 }, () => openDatabase({ url: dbUrl, dataDir: 'memory://' })));
    try {
      for (let round = 0; round < 10; round++) {
        const id = await t.newConnection();
        const results = await Promise.all(workers.map((w, i) => new LeaseStore(w.db as any).acquire(id, `worker-${i}`, TTL)));
        expect(results.filter(Boolean)).toHaveLength(1);
      }
    } finally {
      await Promise.all(workers.map((w) => w.close()));
    }
  });
});

describe('LeaseKeeper', () => {
  test('renews on a timer while sessions are held, and stops when none are', async () => {
    const id = await t.newConnection();
    const clock = new FakeClock();
    const leases = new LeaseStore(t.db, clock);
    const timers = new ManualTimers();
    const lost: string[] = [];
    const keeper = new LeaseKeeper(leases, { owner: 'worker-a', ttlMs: TTL, timers, now: () => clock.now().getTime(), onLost: (c) => void lost.push(c) });
    expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
    keeper.add(id);
    expect(timers.delays()).toEqual([TTL / 3]);
    for (let i = 0; i < 4; i++) {
      clock.advance(TTL / 3);
      await keeper.tick();
    }
    expect((await leases.holder(id))!.expiresAt.getTime()).toBe(clock.now().getTime() + TTL);
    expect(await leases.acquire(id, 'worker-b', TTL)).toBe(false);
    expect(lost).toEqual([]);
    keeper.remove(id);
    expect(timers.pending.size).toBe(0);
  });

  test('reports a lease taken over (after expiry) or revoked, with who holds it now', async () => {
    const taken = await t.newConnection();
    const revoked = await t.newConnection();
    const clock = new FakeClock();
    const leases = new LeaseStore(t.db, clock);
    const lost: Array<[string, LeaseHolder | undefined]> = [];
    const keeper = new LeaseKeeper(leases, { owner: 'worker-a', ttlMs: TTL, timers: new ManualTimers(), now: () => clock.now().getTime(), onLost: (c, h) => void lost.push([c, h]) });
    for (const id of [taken, revoked]) {
      expect(await leases.acquire(id, 'worker-a', TTL)).toBe(true);
      keeper.add(id);
    }
    // worker-a stalls past its TTL; worker-b takes one session over; the other is revoked.
    clock.advance(TTL + 1);
    expect(await leases.acquire(taken, 'worker-b', TTL)).toBe(true);
    await leases.revoke(revoked, 'logout');
    await keeper.tick();
    expect(lost.map(([c, h]) => [c, h?.owner])).toEqual([
      [taken, 'worker-b'],
      [revoked, 'revoked:logout'],
    ]);
    expect(keeper.has(taken) || keeper.has(revoked)).toBe(false);
  });

  test('a renewal that errors is retried; after a TTL of errors the lease counts as lost', async () => {
    const clock = new FakeClock();
    let failing = true;
    const fake = {
      renew: async () => {
        if (failing) throw new Error('database unreachable');
        return true;
      },
      holder: async () => undefined,
    } as unknown as LeaseStore;
    const lost: string[] = [];
    const errors: unknown[] = [];
    const keeper = new LeaseKeeper(fake, {
      owner: 'worker-a',
      ttlMs: TTL,
      timers: new ManualTimers(),
      now: () => clock.now().getTime(),
      onLost: (c) => void lost.push(c),
      onError: (e) => void errors.push(e),
    });
    keeper.add('c1');
    keeper.add('c2');
    clock.advance(TTL / 2);
    await keeper.tick();
    expect(lost).toEqual([]);
    failing = false;
    await keeper.tick(); // c1 and c2 renewed: the error clock restarts
    failing = true;
    clock.advance(TTL);
    await keeper.tick();
    expect(lost).toEqual([]);
    clock.advance(1);
    await keeper.tick();
    expect(lost).toEqual(['c1', 'c2']);
    expect(errors.length).toBe(6); // two sessions × three failed rounds
  });
});

async function currentDatabaseUrl(): Promise<string> {
  const { sql } = await import('kysely');
  const name = (await sql<{ name: string }>`select current_database() as name`.execute(t.db)).rows[0]!.name;
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}
