import { badRequest, DomainError } from '../shared/errors.ts';
import { messagesExceeded, type PlanLimits } from './plans.ts';

/**
 * Message credits. A workspace holds `available` credits; work that will send messages first
 * reserves credits, then consumes them one send at a time, and finally refunds what it did not
 * use. Invariants: `available` never goes negative, and every reservation ends SETTLED with
 * `consumed + refunded = amount`.
 */
export interface CreditAccount {
  workspaceId: string;
  /** First instant (UTC) of the calendar month the allowance belongs to. */
  periodStart: Date;
  /**
   * Credits left to reserve. Below 0 only after the plan's quota was lowered under what the
   * period already used (`followQuota`): nothing can be reserved until refunds pay it back.
   */
  available: number;
  /** The plan's monthly credits this period was granted with; undefined on accounts from before it was recorded. */
  allowance?: number;
}

export type ReservationStatus = 'OPEN' | 'SETTLED';
export type ReservationEvent = 'consume' | 'refund' | 'release';

export interface Reservation {
  id: string;
  workspaceId: string;
  amount: number;
  consumed: number;
  refunded: number;
  status: ReservationStatus;
  /** What the credits are for, e.g. `message` or `campaign:<id>`. */
  reason: string;
  createdAt: Date;
}

/** The reservation state machine as a table: from, event, guard, to. */
export const RESERVATION_TRANSITIONS: ReadonlyArray<{
  from: ReservationStatus;
  event: ReservationEvent;
  guard: (r: Reservation, credits: number) => boolean;
  to: ReservationStatus;
}> = [
  { from: 'OPEN', event: 'consume', guard: (r, n) => remaining(r) - n > 0, to: 'OPEN' },
  { from: 'OPEN', event: 'consume', guard: (r, n) => remaining(r) - n === 0, to: 'SETTLED' },
  { from: 'OPEN', event: 'refund', guard: () => true, to: 'SETTLED' },
  { from: 'OPEN', event: 'release', guard: (r, n) => remaining(r) - n > 0, to: 'OPEN' },
  { from: 'OPEN', event: 'release', guard: (r, n) => remaining(r) - n === 0, to: 'SETTLED' },
];

/** Credits of a reservation not yet consumed nor refunded. */
export function remaining(r: Reservation): number {
  return r.amount - r.consumed - r.refunded;
}

/** Takes `amount` credits out of the account into a new reservation. */
export function reserve(
  account: CreditAccount,
  amount: number,
  reservation: Pick<Reservation, 'id' | 'reason' | 'createdAt'>,
): { account: CreditAccount; reservation: Reservation } {
  assertCount(amount);
  if (amount > account.available) throw messagesExceeded(amount, Math.max(0, account.available));
  return {
    account: { ...account, available: account.available - amount },
    reservation: openReservation(account.workspaceId, amount, reservation),
  };
}

/** A fresh reservation of `amount` credits, nothing consumed or refunded yet. */
export function openReservation(workspaceId: string, amount: number, meta: Pick<Reservation, 'id' | 'reason' | 'createdAt'>): Reservation {
  return { ...meta, workspaceId, amount, consumed: 0, refunded: 0, status: 'OPEN' };
}

/** Uses `credits` of a reservation (one per message sent). */
export function consume(r: Reservation, credits = 1): Reservation {
  assertCount(credits);
  if (credits > remaining(r) && r.status === 'OPEN') {
    throw new DomainError('conflict', `Reservation ${r.id} has ${remaining(r)} credit(s) left, cannot consume ${credits}`);
  }
  const to = transition(r, 'consume', credits);
  return { ...r, consumed: r.consumed + credits, status: to };
}

/** Gives back every unused credit of a reservation and closes it. */
export function refund(account: CreditAccount, r: Reservation): { account: CreditAccount; reservation: Reservation; refunded: number } {
  const to = transition(r, 'refund', 0);
  const refunded = remaining(r);
  return {
    account: { ...account, available: account.available + refunded },
    reservation: { ...r, refunded: r.refunded + refunded, status: to },
    refunded,
  };
}

/**
 * Gives back `credits` of a reservation and keeps the rest: one recipient of a campaign that will
 * not be sent (a failed send, an opt-out). Settles the reservation when nothing remains.
 */
export function release(account: CreditAccount, r: Reservation, credits: number): { account: CreditAccount; reservation: Reservation } {
  assertCount(credits);
  if (credits > remaining(r) && r.status === 'OPEN') {
    throw new DomainError('conflict', `Reservation ${r.id} has ${remaining(r)} credit(s) left, cannot release ${credits}`);
  }
  const to = transition(r, 'release', credits);
  return {
    account: { ...account, available: account.available + credits },
    reservation: { ...r, refunded: r.refunded + credits, status: to },
  };
}

/** At the first use in a new calendar month the allowance of the plan is granted afresh. */
export function renew(account: CreditAccount, plan: PlanLimits, now: Date): CreditAccount {
  const period = monthStart(now);
  if (period.getTime() <= account.periodStart.getTime()) return account;
  return { ...account, periodStart: period, available: plan.messagesPerMonth, allowance: plan.messagesPerMonth };
}

/**
 * The plan's quota changed in configuration during the period: what was used stays used, and the
 * balance moves by the difference (`available = limit - used`, below 0 when the new quota is under
 * what is used). `used` is asked only for an account that never recorded its allowance.
 */
export function followQuota(account: CreditAccount, plan: PlanLimits, used: () => number): CreditAccount {
  const limit = plan.messagesPerMonth;
  if (account.allowance === limit) return account;
  const available = account.allowance === undefined ? limit - used() : account.available + (limit - account.allowance);
  return { ...account, available, allowance: limit };
}

export function openAccount(workspaceId: string, plan: PlanLimits, now: Date): CreditAccount {
  return { workspaceId, periodStart: monthStart(now), available: plan.messagesPerMonth, allowance: plan.messagesPerMonth };
}

export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

function transition(r: Reservation, event: ReservationEvent, credits: number): ReservationStatus {
  const rule = RESERVATION_TRANSITIONS.find((t) => t.from === r.status && t.event === event && t.guard(r, credits));
  if (!rule) throw new DomainError('conflict', `Reservation ${r.id} is ${r.status}; cannot ${event}`);
  return rule.to;
}

function assertCount(n: number): void {
  if (!Number.isInteger(n) || n < 1) throw badRequest('credits must be a positive integer');
}
