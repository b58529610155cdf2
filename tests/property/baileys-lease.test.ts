import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { LeaseStore } from '../../adapters/drivers/baileys/lease.ts';
import { backoffDelay, BACKOFF_MAX_MS } from '../../adapters/drivers/baileys/index.ts';
import { FakeClock, openBaileysTestDb, type BaileysTestDb } from '../fixtures/baileys/support.ts';

/**
 * Model-based test of the session leases on a real database: random interleavings of workers
 * acquiring, renewing and releasing, of revocations and of time passing, checked against a model
 * of one line: who holds the lease and until when.
 */
const OWNERS = ['w1', 'w2', 'w3'] as const;
const TTL = 1_000;

interface Model {
  now: number;
  holder: { owner: string; expiresAt: number } | undefined;
}

interface Real {
  leases: LeaseStore;
  clock: FakeClock;
  connectionId: string;
}

const live = (m: Model) => m.holder !== undefined && m.holder.expiresAt > m.now;

class Acquire implements fc.AsyncCommand<Model, Real> {
  constructor(readonly owner: string) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const expected = !live(m) || m.holder!.owner === this.owner;
    expect(await r.leases.acquire(r.connectionId, this.owner, TTL)).toBe(expected);
    if (expected) m.holder = { owner: this.owner, expiresAt: m.now + TTL };
  }
  toString = () => `acquire(${this.owner})`;
}

class Renew implements fc.AsyncCommand<Model, Real> {
  constructor(readonly owner: string) {}
  check = () => true;
  async run(m: Model, r: Real) {
    // Renewal works for the holder even past expiry, as long as nobody took the lease.
    const expected = m.holder?.owner === this.owner;
    expect(await r.leases.renew(r.connectionId, this.owner, TTL)).toBe(expected);
    if (expected) m.holder = { owner: this.owner, expiresAt: m.now + TTL };
  }
  toString = () => `renew(${this.owner})`;
}

class Release implements fc.AsyncCommand<Model, Real> {
  constructor(readonly owner: string) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const expected = m.holder?.owner === this.owner;
    expect(await r.leases.release(r.connectionId, this.owner)).toBe(expected);
    if (expected) m.holder = undefined;
  }
  toString = () => `release(${this.owner})`;
}

class Revoke implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(m: Model, r: Real) {
    await r.leases.revoke(r.connectionId, 'disconnect');
    if (m.holder) m.holder = { owner: 'revoked:disconnect', expiresAt: m.now };
  }
  toString = () => 'revoke';
}

class Wait implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    m.now += this.ms;
    r.clock.advance(this.ms);
    const holder = await r.leases.holder(r.connectionId);
    expect(holder ? { owner: holder.owner, expiresAt: holder.expiresAt.getTime() - r.clock.now().getTime() + m.now } : undefined).toEqual(m.holder);
  }
  toString = () => `wait(${this.ms})`;
}

const owner = fc.constantFrom(...OWNERS);
const commands = [
  owner.map((o) => new Acquire(o)),
  owner.map((o) => new Renew(o)),
  owner.map((o) => new Release(o)),
  fc.constant(new Revoke()),
  fc.integer({ min: 1, max: 1_500 }).map((ms) => new Wait(ms)),
];

let t: BaileysTestDb;
beforeAll(async () => {
  t = await openBaileysTestDb();
});
afterAll(async () => {
  await t.close();
});

describe('session leases, model-based', () => {
  test('at most one live holder, exactly as the model says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        const clock = new FakeClock();
        const real: Real = { leases: new LeaseStore(t.db, clock), clock, connectionId: await t.newConnection() };
        await fc.asyncModelRun(() => ({ model: { now: 0, holder: undefined }, real }), cmds);
      }),
      { numRuns: 40 },
    );
  });

  test('reconnect backoff: within [0.8, 1.2] of 1 s doubling, never above 60 s', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 64 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, r) => {
        const delay = backoffDelay(attempt, () => r);
        const base = Math.min(BACKOFF_MAX_MS, 1_000 * 2 ** attempt);
        expect(delay).toBeLessThanOrEqual(BACKOFF_MAX_MS);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
        expect(delay).toBeLessThanOrEqual(Math.ceil(base * 1.2));
      }),
    );
  });
});
