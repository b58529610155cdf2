import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import {
  consume,
  consumeCredits,
  DEFAULT_PLANS,
  messageHeadroom,
  monthStart,
  followQuota,
  openAccount,
  refund,
  refundCredits,
  renew,
  reserve,
  reserveCredits,
  RESERVATION_TRANSITIONS,
  type CreditAccount,
  type MeteringDeps,
  type PlanCatalog,
  type PlanLimits,
  type Reservation,
  type ReservationStatus,
} from '../../core/plans/index.ts';
import { DomainError } from '../../core/shared/errors.ts';
import type { Clock, IdGen } from '../../core/shared/ports.ts';
import { creditStore } from '../../adapters/postgres/repositories/credit-store.ts';
import type { Database } from '../../adapters/postgres/schema.ts';
import { onPostgres, openTestDatabase, type TestDatabase } from '../support/database.ts';
import { expectDomainError } from '../support/expect-domain-error.ts';

// ---------------------------------------------------------------------------------------------
// The model: far simpler than the system. Available credits and a list of reservations.
// ---------------------------------------------------------------------------------------------

interface ModelReservation {
  id: string;
  amount: number;
  consumed: number;
  refunded: number;
  status: ReservationStatus;
}

interface LedgerModel {
  grant: number;
  available: number;
  reservations: ModelReservation[];
}

type ReservationView = ModelReservation;

/** What the commands drive: the pure ledger, or the metering use cases on a real database. */
interface Ledger {
  reserve(amount: number): Promise<ReservationView>;
  consume(id: string, credits: number): Promise<ReservationView>;
  refund(id: string): Promise<{ reservation: ReservationView; refunded: number }>;
  /** Compares the system with the model (and checks the ledger invariants on the system). */
  verify(model: LedgerModel): Promise<void>;
}

const modelRemaining = (r: ModelReservation) => r.amount - r.consumed - r.refunded;
const view = (r: Reservation): ReservationView => ({ id: r.id, amount: r.amount, consumed: r.consumed, refunded: r.refunded, status: r.status });
const isCount = (n: number) => Number.isInteger(n) && n >= 1;

/** The ledger invariants, on what the system holds (not on the model). */
function checkInvariants(grant: number, available: number, reservations: ReservationView[]): void {
  expect(available).toBeGreaterThanOrEqual(0);
  let openRemaining = 0;
  let consumed = 0;
  for (const r of reservations) {
    expect(r.amount).toBeGreaterThan(0);
    expect(r.consumed).toBeGreaterThanOrEqual(0);
    expect(r.refunded).toBeGreaterThanOrEqual(0);
    expect(r.consumed + r.refunded).toBeLessThanOrEqual(r.amount);
    if (r.status === 'SETTLED') expect(r.consumed + r.refunded).toBe(r.amount);
    if (r.status === 'OPEN') {
      expect(r.refunded).toBe(0);
      openRemaining += r.amount - r.consumed - r.refunded;
    }
    consumed += r.consumed;
  }
  // Conservation: every credit granted is available, held by an open reservation, or consumed
  // (refunds flow back into `available`).
  expect(available + openRemaining + consumed).toBe(grant);
}

function sortById<T extends { id: string }>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Commands: one class each, shared by both layers.
// ---------------------------------------------------------------------------------------------

type LedgerCommand = fc.AsyncCommand<LedgerModel, Ledger>;

class ReserveCommand implements LedgerCommand {
  constructor(readonly amount: number) {}
  check() {
    return true;
  }
  async run(model: LedgerModel, ledger: Ledger) {
    if (!isCount(this.amount)) {
      await expectDomainError(() => ledger.reserve(this.amount), 'invalid_input');
    } else if (this.amount > model.available) {
      const error = await expectDomainError(() => ledger.reserve(this.amount), 'forbidden', 'USER_PLAN_EXCEEDED_MESSAGES');
      expect(error.shape).toBe('coded');
    } else {
      const r = await ledger.reserve(this.amount);
      expect(r).toMatchObject({ amount: this.amount, consumed: 0, refunded: 0, status: 'OPEN' });
      expect(model.reservations.some((m) => m.id === r.id)).toBe(false);
      model.available -= this.amount;
      model.reservations.push({ id: r.id, amount: this.amount, consumed: 0, refunded: 0, status: 'OPEN' });
    }
    await ledger.verify(model);
  }
  toString() {
    return `Reserve(${this.amount})`;
  }
}

class ConsumeCommand implements LedgerCommand {
  constructor(
    readonly index: number,
    readonly credits: number,
  ) {}
  check(model: Readonly<LedgerModel>) {
    return model.reservations.length > 0;
  }
  async run(model: LedgerModel, ledger: Ledger) {
    const target = model.reservations[this.index % model.reservations.length]!;
    if (!isCount(this.credits)) {
      await expectDomainError(() => ledger.consume(target.id, this.credits), 'invalid_input');
    } else if (target.status !== 'OPEN' || this.credits > modelRemaining(target)) {
      await expectDomainError(() => ledger.consume(target.id, this.credits), 'conflict');
    } else {
      const r = await ledger.consume(target.id, this.credits);
      target.consumed += this.credits;
      if (modelRemaining(target) === 0) target.status = 'SETTLED';
      expect(r).toEqual(target);
    }
    await ledger.verify(model);
  }
  toString() {
    return `Consume(#${this.index}, ${this.credits})`;
  }
}

class RefundCommand implements LedgerCommand {
  constructor(readonly index: number) {}
  check(model: Readonly<LedgerModel>) {
    return model.reservations.length > 0;
  }
  async run(model: LedgerModel, ledger: Ledger) {
    const target = model.reservations[this.index % model.reservations.length]!;
    if (target.status !== 'OPEN') {
      await expectDomainError(() => ledger.refund(target.id), 'conflict');
    } else {
      const left = modelRemaining(target);
      const result = await ledger.refund(target.id);
      target.refunded += left;
      target.status = 'SETTLED';
      model.available += left;
      expect(result.refunded).toBe(left);
      expect(result.reservation).toEqual(target);
    }
    await ledger.verify(model);
  }
  toString() {
    return `Refund(#${this.index})`;
  }
}

/** Consuming or refunding a reservation that does not exist is a 404 and changes nothing. */
class UnknownReservationCommand implements LedgerCommand {
  constructor(readonly refund: boolean) {}
  check() {
    return true;
  }
  async run(model: LedgerModel, ledger: Ledger) {
    const id = crypto.randomUUID();
    await expectDomainError(() => (this.refund ? ledger.refund(id) : ledger.consume(id, 1)), 'not_found');
    await ledger.verify(model);
  }
  toString() {
    return this.refund ? 'RefundUnknown' : 'ConsumeUnknown';
  }
}

const ledgerCommands = (maxAmount: number) =>
  fc.commands(
    [
      fc.oneof(
        { weight: 10, arbitrary: fc.integer({ min: 1, max: maxAmount }) },
        { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, Number.NaN) },
      ).map((n) => new ReserveCommand(n)),
      fc
        .tuple(
          fc.nat(),
          fc.oneof({ weight: 10, arbitrary: fc.integer({ min: 1, max: 12 }) }, { weight: 1, arbitrary: fc.constantFrom(0, -2, 0.5) }),
        )
        .map(([i, n]) => new ConsumeCommand(i, n)),
      fc.nat().map((i) => new RefundCommand(i)),
      fc.boolean().map((r) => new UnknownReservationCommand(r)),
    ],
    { maxCommands: 40, size: 'medium' },
  );

// ---------------------------------------------------------------------------------------------
// Deterministic ports.
// ---------------------------------------------------------------------------------------------

const NOW = new Date('2025-03-15T12:34:56.789Z');
const fixedClock = (at: Date = NOW): Clock => ({ now: () => new Date(at.getTime()) });
const uuidIds: IdGen = { next: () => crypto.randomUUID() };

function planWith(messagesPerMonth: number): PlanLimits {
  return { ...DEFAULT_PLANS.FREE, messagesPerMonth };
}

function catalogWith(grant: number): PlanCatalog {
  return { FREE: planWith(grant), PRO: DEFAULT_PLANS.PRO };
}

// ---------------------------------------------------------------------------------------------
// a) The pure ledger of core/plans/credit-ledger.ts.
// ---------------------------------------------------------------------------------------------

class PureLedger implements Ledger {
  account: CreditAccount;
  readonly reservations = new Map<string, Reservation>();

  constructor(readonly grant: number) {
    this.account = openAccount('00000000-0000-4000-8000-000000000001', planWith(grant), NOW);
  }

  async reserve(amount: number) {
    const result = reserve(this.account, amount, { id: uuidIds.next(), reason: 'message', createdAt: NOW });
    this.account = result.account;
    this.reservations.set(result.reservation.id, result.reservation);
    return view(result.reservation);
  }

  async consume(id: string, credits: number) {
    const current = this.reservations.get(id);
    if (!current) throw new DomainError('not_found', `Credit reservation ${id} not found`);
    const next = consume(current, credits);
    this.reservations.set(id, next);
    return view(next);
  }

  async refund(id: string) {
    const current = this.reservations.get(id);
    if (!current) throw new DomainError('not_found', `Credit reservation ${id} not found`);
    const result = refund(this.account, current);
    this.account = result.account;
    this.reservations.set(id, result.reservation);
    return { reservation: view(result.reservation), refunded: result.refunded };
  }

  async verify(model: LedgerModel) {
    const held = [...this.reservations.values()].map(view);
    checkInvariants(this.grant, this.account.available, held);
    expect(this.account.available).toBe(model.available);
    expect(sortById(held)).toEqual(sortById(model.reservations));
  }
}

describe('credit ledger, pure (core/plans/credit-ledger.ts)', () => {
  test('model-based: reserve / consume / refund keep the ledger invariants and match the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 60 }), ledgerCommands(40), async (grant, commands) => {
        await fc.asyncModelRun(() => {
          const real = new PureLedger(grant);
          return { model: { grant, available: grant, reservations: [] }, real };
        }, commands);
      }),
      { numRuns: 300 },
    );
  });

  test('RESERVATION_TRANSITIONS: only OPEN moves; for any valid consume exactly one rule applies', () => {
    expect(RESERVATION_TRANSITIONS.every((t) => t.from === 'OPEN')).toBe(true);
    expect(RESERVATION_TRANSITIONS.filter((t) => t.event === 'refund').map((t) => t.to)).toEqual(['SETTLED']);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }).chain((amount) =>
          fc.record({ amount: fc.constant(amount), consumed: fc.integer({ min: 0, max: amount - 1 }), credits: fc.integer({ min: 1, max: 120 }) }),
        ),
        ({ amount, consumed: used, credits }) => {
          const r: Reservation = { id: 'r', workspaceId: 'w', amount, consumed: used, refunded: 0, status: 'OPEN', reason: 'x', createdAt: NOW };
          const rules = RESERVATION_TRANSITIONS.filter((t) => t.from === 'OPEN' && t.event === 'consume' && t.guard(r, credits));
          const left = amount - used;
          if (credits > left) expect(rules).toHaveLength(0);
          else expect(rules.map((t) => t.to)).toEqual([credits === left ? 'SETTLED' : 'OPEN']);
          const settled = { ...r, status: 'SETTLED' as const };
          expect(RESERVATION_TRANSITIONS.some((t) => t.from === settled.status)).toBe(false);
        },
      ),
    );
  });

  const instant = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-12-31T23:59:59Z'), noInvalidDate: true });

  test('monthStart is midnight UTC on the 1st of the same month, at or before the instant', () => {
    fc.assert(
      fc.property(instant, (at) => {
        const start = monthStart(at);
        expect(start.toISOString()).toBe(`${at.toISOString().slice(0, 7)}-01T00:00:00.000Z`);
        expect(start.getTime()).toBeLessThanOrEqual(at.getTime());
      }),
    );
  });

  test('openAccount grants the plan allowance for the current month; renew grants it afresh only in a later month', () => {
    fc.assert(
      fc.property(instant, instant, fc.nat({ max: 10_000 }), fc.nat({ max: 10_000 }), (opened, later, allowance, left) => {
        const plan = planWith(allowance);
        const account = openAccount('w', plan, opened);
        expect(account).toEqual({ workspaceId: 'w', periodStart: monthStart(opened), available: allowance, allowance });
        const spent = { ...account, available: left };
        const renewed = renew(spent, plan, later);
        if (monthStart(later).getTime() > monthStart(opened).getTime()) {
          expect(renewed).toEqual({ workspaceId: 'w', periodStart: monthStart(later), available: allowance, allowance });
        } else {
          // The same month, or a clock that went back: nothing changes.
          expect(renewed).toBe(spent);
        }
      }),
    );
  });

  test('followQuota (issue 20 §10): after any chain of quota changes, available = quota − used; unchanged quota, unchanged account', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000 }), fc.nat({ max: 10_000 }), fc.array(fc.nat({ max: 10_000 }), { maxLength: 5 }), (granted, used, quotas) => {
        let account = { ...openAccount('w', planWith(granted), new Date('2026-11-02T00:00:00Z')), available: granted - used };
        for (const quota of quotas) {
          const followed = followQuota(account, planWith(quota), () => used);
          expect(followed).toMatchObject({ available: quota - used, allowance: quota });
          expect(followQuota(followed, planWith(quota), () => 0)).toBe(followed);
          account = followed;
        }
        // An account from before allowances were recorded: derived from the month's usage.
        const { allowance: _unknown, ...legacy } = account;
        expect(followQuota(legacy, planWith(granted), () => used)).toMatchObject({ available: granted - used, allowance: granted });
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// b) The metering use cases on the real Postgres adapter (PGlite; Postgres too when configured).
// ---------------------------------------------------------------------------------------------

async function insertWorkspace(db: Kysely<Database>): Promise<string> {
  const userId = crypto.randomUUID();
  const workspaceId = crypto.randomUUID();
  await db.insertInto('users').values({ id: userId, email: `${userId}@example.com`, name: 'Owner', password_hash: null }).execute();
  await db.insertInto('workspaces').values({ id: workspaceId, name: 'Ledger', is_personal: false, plan: 'FREE' }).execute();
  await db.insertInto('memberships').values({ workspace_id: workspaceId, user_id: userId, roles: ['OWNER'] }).execute();
  return workspaceId;
}

class DatabaseLedger implements Ledger {
  readonly deps: MeteringDeps;
  readonly workspace: { id: string; plan: 'FREE' };

  constructor(
    readonly db: Kysely<Database>,
    workspaceId: string,
    readonly grant: number,
  ) {
    this.deps = { clock: fixedClock(), ids: uuidIds, plans: catalogWith(grant) };
    this.workspace = { id: workspaceId, plan: 'FREE' };
  }

  /** A new workspace; its credit account opened up front (as workspace creation does) or left to first use. */
  static async open(db: Kysely<Database>, grant: number, options: { openAccount: boolean } = { openAccount: true }): Promise<DatabaseLedger> {
    const workspaceId = await insertWorkspace(db);
    if (options.openAccount) {
      await db.transaction().execute((trx) => creditStore(trx).saveAccount(openAccount(workspaceId, planWith(grant), NOW)));
    }
    return new DatabaseLedger(db, workspaceId, grant);
  }

  async reserve(amount: number) {
    return view(await this.db.transaction().execute((trx) => reserveCredits(creditStore(trx), this.deps, this.workspace, amount, 'message')));
  }

  async consume(id: string, credits: number) {
    return view(await this.db.transaction().execute((trx) => consumeCredits(creditStore(trx), id, credits)));
  }

  async refund(id: string) {
    const result = await this.db.transaction().execute((trx) => refundCredits(creditStore(trx), id));
    return { reservation: view(result.reservation), refunded: result.refunded };
  }

  headroom() {
    return this.db.transaction().execute((trx) => messageHeadroom(creditStore(trx), this.deps, this.workspace));
  }

  async verify(model: LedgerModel) {
    const headroom = await this.headroom();
    const account = await this.db.selectFrom('credit_accounts').selectAll().where('workspace_id', '=', this.workspace.id).executeTakeFirstOrThrow();
    const rows = await this.db.selectFrom('credit_reservations').selectAll().where('workspace_id', '=', this.workspace.id).execute();
    const held: ReservationView[] = rows.map((row) => ({
      id: row.id,
      amount: row.amount,
      consumed: row.consumed,
      refunded: row.refunded,
      status: row.status as ReservationStatus,
    }));

    checkInvariants(this.grant, account.available, held);
    expect(account.available).toBe(model.available);
    expect(new Date(account.period_start).toISOString()).toBe(monthStart(NOW).toISOString());
    expect(sortById(held)).toEqual(sortById(model.reservations));

    const open = model.reservations.filter((r) => r.status === 'OPEN');
    expect({
      limit: headroom.limit,
      available: headroom.available,
      reserved: headroom.reserved,
      consumed: headroom.consumed,
      periodStart: headroom.periodStart.toISOString(),
      periodEnd: headroom.periodEnd.toISOString(),
    }).toEqual({
      limit: this.grant,
      available: model.available,
      reserved: open.reduce((sum, r) => sum + modelRemaining(r), 0),
      consumed: model.reservations.reduce((sum, r) => sum + r.consumed, 0),
      periodStart: '2025-03-01T00:00:00.000Z',
      periodEnd: '2025-04-01T00:00:00.000Z',
    });
  }
}

describe(`credit ledger on the database (metering + credit-store, ${onPostgres ? 'Postgres' : 'PGlite'})`, () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase();
  });

  afterAll(async () => {
    await database?.close();
  });

  test('model-based: the use cases in transactions match the model, messageHeadroom and the rows', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), ledgerCommands(30), async (grant, commands) => {
        const real = await DatabaseLedger.open(database.db, grant);
        await fc.asyncModelRun(() => ({ model: { grant, available: grant, reservations: [] }, real }), commands);
      }),
      { numRuns: 25 },
    );
  });

  test('at the turn of the month the allowance is granted afresh and open reservations keep their credits', async () => {
    const ledger = await DatabaseLedger.open(database.db, 10);
    const held = await ledger.reserve(4);
    await ledger.consume(held.id, 1);
    const april = { ...ledger.deps, clock: fixedClock(new Date('2025-04-02T00:00:00.000Z')) };
    const headroom = await database.db.transaction().execute((trx) => messageHeadroom(creditStore(trx), april, ledger.workspace));
    expect(headroom.available).toBe(10);
    expect(headroom.reserved).toBe(3);
    expect(headroom.periodStart.toISOString()).toBe('2025-04-01T00:00:00.000Z');
    expect(headroom.periodEnd.toISOString()).toBe('2025-05-01T00:00:00.000Z');
    // The reservation was made in March: its consumption does not count against April.
    expect(headroom.consumed).toBe(0);
  });

  test.skipIf(!onPostgres)('concurrent reservations on Postgres never overdraw (account opened up front or on first use)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 2, maxLength: 12 }),
        fc.boolean(),
        async (grant, amounts, opened) => {
        const ledger = await DatabaseLedger.open(database.db, grant, { openAccount: opened });
        const outcomes = await Promise.allSettled(amounts.map((amount) => ledger.reserve(amount)));
        let granted = 0;
        const refused: number[] = [];
        outcomes.forEach((outcome, i) => {
          if (outcome.status === 'fulfilled') granted += amounts[i]!;
          else {
            // Only the plan limit may refuse: no deadlock, no serialization failure.
            expect(outcome.reason).toBeInstanceOf(DomainError);
            expect((outcome.reason as DomainError).message).toBe('USER_PLAN_EXCEEDED_MESSAGES');
            refused.push(amounts[i]!);
          }
        });
        expect(granted).toBeLessThanOrEqual(grant);
        // (When every reservation was refused on first use, this opens the account.)
        const headroom = await ledger.headroom();
        const account = await database.db.selectFrom('credit_accounts').selectAll().where('workspace_id', '=', ledger.workspace.id).executeTakeFirstOrThrow();
        expect(account.available).toBe(grant - granted);
        expect(headroom.available).toBe(grant - granted);
        expect(headroom.reserved).toBe(granted);
        const rows = await database.db.selectFrom('credit_reservations').select('amount').where('workspace_id', '=', ledger.workspace.id).execute();
        expect(rows.reduce((sum, r) => sum + r.amount, 0)).toBe(granted);
        // Credits only went down, so a refusal means even the final balance could not cover it.
        for (const amount of refused) expect(amount).toBeGreaterThan(account.available);
        },
      ),
      { numRuns: 30 },
    );
  });
});
