import type { Clock, IdGen } from '../shared/ports.ts';
import { afterAttempt, mayAttempt, REQUEST_TIMEOUT_MS, type AttemptOutcome, type DeliveryProgress } from './delivery.ts';
import type { Delivery, DeliveryEndpoint, WebhookSender } from './dispatch.ts';

/**
 * The delivery engine: deliveries are their own queue. A worker claims due deliveries in a
 * batch for a lease, makes each attempt outside any transaction, and records the attempts in a
 * batch; only the worker holding a delivery's claim may record its attempt, so an attempt is
 * never recorded twice and a delivery never succeeds twice. A worker that dies stops renewing
 * its leases; its deliveries are due again once they pass.
 */

/** How long a claim holds a delivery unless renewed (wall-clock time: it is about a live worker). */
export const LEASE_SECONDS = 30;
/** Held claims are renewed this often, well before they lapse. */
export const LEASE_RENEWAL_SECONDS = 5;
/** A request starts only with this much lease left: its timeout, and time to record the outcome. */
export const LEASE_NEEDED_TO_SEND_MS = REQUEST_TIMEOUT_MS + 5_000;

/** A delivery held by one claim until `claimedUntil`. */
export interface ClaimedDelivery extends Delivery {
  claimId: string;
  claimedUntil: Date;
}

/** One attempt made under a claim, and what it leaves the delivery as. */
export interface AttemptRecord {
  delivery: ClaimedDelivery;
  at: Date;
  outcome: AttemptOutcome;
  durationMs: number;
  next: DeliveryProgress;
  /** When the next attempt is due (a retry), or null once settled. */
  nextAttemptAt: Date | null;
}

export interface ClaimRequest {
  claimId: string;
  /** Deliveries due at or before this (domain time) are claimed. */
  due: Date;
  /** Claims that lapsed before this (wall-clock time) are free again. */
  wallClock: Date;
  claimedUntil: Date;
  limit: number;
  /** Webhooks this worker already holds enough of (one slow endpoint must not take every slot). */
  skipWebhooks: readonly string[];
}

export interface DeliveryClaims {
  /** Claims up to `limit` due, unheld deliveries, oldest due first; skips rows other workers are claiming. */
  claim(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /** Extends the claims still held; returns the ids renewed (a lapsed one may be another worker's now). */
  renew(held: readonly Pick<ClaimedDelivery, 'id' | 'claimId'>[], claimedUntil: Date): Promise<Set<string>>;
  /**
   * Records attempts of deliveries still held by their claim (history row, state, next due
   * time; the claim ends); returns the ids recorded. Attempts are numbered over the delivery's life.
   */
  record(attempts: readonly AttemptRecord[], updatedAt: Date): Promise<Set<string>>;
  /** Ends claims without an attempt: `due` makes them due again at once, `settle` never (the webhook is gone). */
  release(held: readonly Pick<ClaimedDelivery, 'id' | 'claimId'>[], how: 'due' | 'settle', now: Date): Promise<void>;
}

export interface EngineDeps {
  /** Domain time: when deliveries and retries are due. */
  clock: Clock;
  /** Wall-clock time: leases. */
  wallClock: Clock;
  ids: IdGen;
}

/** Claims a batch of due deliveries for this worker. */
export async function claimDue(claims: DeliveryClaims, deps: EngineDeps, limit: number, skipWebhooks: readonly string[] = []): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const wallClock = deps.wallClock.now();
  return claims.claim({
    claimId: deps.ids.next(),
    due: deps.clock.now(),
    wallClock,
    claimedUntil: new Date(wallClock.getTime() + LEASE_SECONDS * 1000),
    limit,
    skipWebhooks,
  });
}

/** Whether a held delivery may still be sent: its lease outlasts a request and its recording. */
export function maySend(delivery: ClaimedDelivery, wallClock: Date): boolean {
  return mayAttempt(delivery) && delivery.claimedUntil.getTime() - wallClock.getTime() >= LEASE_NEEDED_TO_SEND_MS;
}

/**
 * One attempt of a held delivery: the signed request (10 s timeout), and the delivery after it
 * (the transition table of delivery.ts: success below 400; 3 attempts; retries 5 s then 10 s).
 */
export async function attemptClaimed(sender: WebhookSender, deps: EngineDeps, delivery: ClaimedDelivery, endpoint: DeliveryEndpoint): Promise<AttemptRecord> {
  const at = deps.clock.now();
  const timestamp = Math.floor(at.getTime() / 1000);
  const answer = await sender.post(endpoint.url, delivery.body, endpoint.headers(delivery.body, timestamp), REQUEST_TIMEOUT_MS);
  const outcome: AttemptOutcome = 'status' in answer ? { status: answer.status } : { error: answer.error };
  const { progress, retryInSeconds } = afterAttempt(delivery, outcome);
  const nextAttemptAt = retryInSeconds === null ? null : new Date(deps.clock.now().getTime() + retryInSeconds * 1000);
  return { delivery, at, outcome, durationMs: Math.round(answer.durationMs), next: progress, nextAttemptAt };
}

/** Records a batch of attempts in one go; returns the ids recorded (those whose claim still held). */
export async function recordAttempts(claims: DeliveryClaims, deps: EngineDeps, attempts: readonly AttemptRecord[]): Promise<Set<string>> {
  if (attempts.length === 0) return new Set();
  return claims.record(attempts, deps.clock.now());
}
