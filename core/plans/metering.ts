import type { Clock, IdGen } from '../shared/ports.ts';
import { notFound } from '../shared/errors.ts';
import type { PlanCatalog, PlanName } from './plans.ts';
import { consume, followQuota, monthStart, openAccount, openReservation, refund, release, renew, reserve, type CreditAccount, type Reservation } from './credit-ledger.ts';
import { PLAN_NAMES } from './plans.ts';

/**
 * Persistence of credit accounts and reservations. `lock*` reads take a row lock so that
 * concurrent reservations serialize; callers pass stores bound to their own transaction.
 */
export interface CreditStore {
  lockAccount(workspaceId: string): Promise<CreditAccount | undefined>;
  /**
   * Inserts `account` unless the workspace already has one, then locks and returns the stored
   * account. Two first uses at once must not both open it: the later one would overwrite what
   * the first one reserved.
   */
  createAccount(account: CreditAccount): Promise<CreditAccount>;
  saveAccount(account: CreditAccount): Promise<void>;
  /**
   * The fast path of a reservation, as one conditional write: stores `reservation` and takes its
   * credits when the account is in period `periodStart` and covers them; false changes nothing.
   */
  reserveIfCovered(reservation: Reservation, periodStart: Date): Promise<boolean>;
  insertReservation(reservation: Reservation): Promise<void>;
  lockReservation(id: string): Promise<Reservation | undefined>;
  /** Row-locked reads of several reservations (in id order, so concurrent callers never deadlock). */
  lockReservations(ids: readonly string[]): Promise<Reservation[]>;
  /** A reservation as it stands, without a lock (to show it). */
  findReservation(id: string): Promise<Reservation | undefined>;
  saveReservation(reservation: Reservation): Promise<void>;
  saveReservations(reservations: readonly Reservation[]): Promise<void>;
  /** Credits held by OPEN reservations, and credits consumed since `since`. */
  usage(workspaceId: string, since: Date): Promise<{ reserved: number; consumed: number }>;
  /** Workspaces whose account in period `periodStart` was granted other than its plan's quota (`quotas`), or never recorded it. */
  accountsOffQuota(periodStart: Date, quotas: Record<PlanName, number>): Promise<Array<{ workspaceId: string; plan: PlanName }>>;
}

export interface MeteringDeps {
  clock: Clock;
  ids: IdGen;
  plans: PlanCatalog;
}

/**
 * Reserves credits for work that will send `amount` messages; throws USER_PLAN_EXCEEDED_MESSAGES.
 * Call it last in a transaction: the account's row is locked from the debit until commit, so
 * the shorter that is, the more sends a workspace can accept at once.
 */
export async function reserveCredits(
  store: CreditStore,
  deps: MeteringDeps,
  workspace: { id: string; plan: PlanName | (() => Promise<PlanName>) },
  amount: number,
  reason: string,
  id: string = deps.ids.next(),
): Promise<Reservation> {
  const now = deps.clock.now();
  const meta = { id, reason, createdAt: now };
  // Usually the account is open, in this month and covers the amount: one conditional write.
  if (Number.isInteger(amount) && amount >= 1) {
    const reservation = openReservation(workspace.id, amount, meta);
    if (await store.reserveIfCovered(reservation, monthStart(now))) return reservation;
  }
  // Otherwise decide under the row lock: open or renew the account, or refuse.
  const plan = typeof workspace.plan === 'function' ? await workspace.plan() : workspace.plan;
  const account = await currentAccount(store, deps, { id: workspace.id, plan });
  const result = reserve(account, amount, meta);
  await store.saveAccount(result.account);
  await store.insertReservation(result.reservation);
  return result.reservation;
}

/**
 * Reserves `amount` credits for a batch of sends (one reservation they share) in one conditional
 * write, when the account is open in this month and covers them all. False changes nothing: the
 * caller then reserves one by one (`reserveCredits`), which opens or renews the account and
 * refuses exactly the sends the credits do not cover.
 */
export async function reserveBatchIfCovered(store: CreditStore, deps: MeteringDeps, workspaceId: string, amount: number, meta: { id: string; reason: string }): Promise<boolean> {
  const now = deps.clock.now();
  return store.reserveIfCovered(openReservation(workspaceId, amount, { ...meta, createdAt: now }), monthStart(now));
}

/** Marks `credits` of a reservation as used by sends that went out. */
export async function consumeCredits(store: CreditStore, reservationId: string, credits = 1): Promise<Reservation> {
  const reservation = await lockedReservation(store, reservationId);
  const next = consume(reservation, credits);
  await store.saveReservation(next);
  return next;
}

/**
 * Marks one credit used per listed reservation (a reservation listed n times, n credits): the
 * sends of a batch that went out, recorded with one locking read and few writes.
 */
export async function consumeCreditsEach(store: CreditStore, reservationIds: readonly string[]): Promise<void> {
  if (reservationIds.length === 0) return;
  const counts = new Map<string, number>();
  for (const id of reservationIds) counts.set(id, (counts.get(id) ?? 0) + 1);
  const reservations = await store.lockReservations([...counts.keys()]);
  for (const id of counts.keys()) if (!reservations.some((r) => r.id === id)) throw notFound(`Credit reservation ${id} not found`);
  await store.saveReservations(reservations.map((r) => consume(r, counts.get(r.id)!)));
}

/** Returns the unused credits of a reservation to the account and closes it. */
export async function refundCredits(store: CreditStore, reservationId: string): Promise<{ reservation: Reservation; refunded: number }> {
  const reservation = await lockedReservation(store, reservationId);
  const account = await store.lockAccount(reservation.workspaceId);
  if (!account) throw notFound(`No credit account for workspace ${reservation.workspaceId}`);
  const result = refund(account, reservation);
  await store.saveAccount(result.account);
  await store.saveReservation(result.reservation);
  return { reservation: result.reservation, refunded: result.refunded };
}

/** Returns `credits` unused credits of a reservation to the account; the rest stay reserved. */
export async function releaseCredits(store: CreditStore, reservationId: string, credits: number): Promise<Reservation> {
  const reservation = await lockedReservation(store, reservationId);
  const account = await store.lockAccount(reservation.workspaceId);
  if (!account) throw notFound(`No credit account for workspace ${reservation.workspaceId}`);
  const result = release(account, reservation, credits);
  await store.saveAccount(result.account);
  await store.saveReservation(result.reservation);
  return result.reservation;
}

/** One message, metered: reserves and consumes a single credit. */
export async function spendCredit(
  store: CreditStore,
  deps: MeteringDeps,
  workspace: { id: string; plan: PlanName },
  reason: string,
): Promise<Reservation> {
  const reservation = await reserveCredits(store, deps, workspace, 1, reason);
  return consumeCredits(store, reservation.id, 1);
}

export interface MessageHeadroom {
  limit: number;
  available: number;
  reserved: number;
  consumed: number;
  periodStart: Date;
  periodEnd: Date;
}

export async function messageHeadroom(
  store: CreditStore,
  deps: MeteringDeps,
  workspace: { id: string; plan: PlanName },
): Promise<MessageHeadroom> {
  const account = await currentAccount(store, deps, workspace);
  const usage = await store.usage(workspace.id, account.periodStart);
  const periodEnd = new Date(Date.UTC(account.periodStart.getUTCFullYear(), account.periodStart.getUTCMonth() + 1, 1));
  return {
    limit: deps.plans[workspace.plan].messagesPerMonth,
    // Never more than the limit leaves (a quota lowered under the month's usage owes credits).
    available: Math.max(0, account.available),
    reserved: usage.reserved,
    consumed: usage.consumed,
    periodStart: account.periodStart,
    periodEnd,
  };
}

/**
 * Applies the configured quotas to the accounts of this month at start (issue 20 §10): a quota
 * changed in configuration reaches every workspace at once, not only at the next month. Sends
 * reserve on a fast path that does not read the plan, so this cannot wait for a slow-path read.
 */
export async function followPlanQuotas(store: CreditStore, deps: MeteringDeps): Promise<number> {
  const quotas = Object.fromEntries(PLAN_NAMES.map((name) => [name, deps.plans[name].messagesPerMonth])) as Record<PlanName, number>;
  const off = await store.accountsOffQuota(monthStart(deps.clock.now()), quotas);
  for (const workspace of off) await currentAccount(store, deps, { id: workspace.workspaceId, plan: workspace.plan });
  return off.length;
}

/** The account, opened on first use, renewed at the turn of the month, following its plan's quota. */
async function currentAccount(store: CreditStore, deps: MeteringDeps, workspace: { id: string; plan: PlanName }): Promise<CreditAccount> {
  const plan = deps.plans[workspace.plan];
  const now = deps.clock.now();
  const stored = (await store.lockAccount(workspace.id)) ?? (await store.createAccount(openAccount(workspace.id, plan, now)));
  const renewed = renew(stored, plan, now);
  let used = 0;
  if (renewed.allowance === undefined) {
    const usage = await store.usage(workspace.id, renewed.periodStart);
    used = usage.reserved + usage.consumed;
  }
  const account = followQuota(renewed, plan, () => used);
  if (account !== stored) await store.saveAccount(account);
  return account;
}

async function lockedReservation(store: CreditStore, id: string): Promise<Reservation> {
  const reservation = await store.lockReservation(id);
  if (!reservation) throw notFound(`Credit reservation ${id} not found`);
  return reservation;
}
