/**
 * A delivery: one request to one webhook (one event, or a batch of messages). Spec 6.4: success
 * is any status below 400; 4xx, 5xx and timeouts are retried; 3 attempts in all; exponential
 * backoff starting at 5 seconds; 10-second timeout.
 */
export const MAX_ATTEMPTS = 3;
export const FIRST_RETRY_SECONDS = 5;
export const REQUEST_TIMEOUT_MS = 10_000;

export type DeliveryState = 'PENDING' | 'RETRYING' | 'SUCCEEDED' | 'FAILED';

/** What one attempt came to: an HTTP status, or a failure to get one (timeout, refused). */
export type AttemptOutcome = { status: number } | { error: string };

export interface DeliveryProgress {
  state: DeliveryState;
  attempts: number;
}

/** The state machine as a table: from, what the attempt came to, guard, to. */
export const DELIVERY_TRANSITIONS: ReadonlyArray<{
  from: DeliveryState;
  on: 'success' | 'failure';
  guard: (attemptsAfter: number) => boolean;
  to: DeliveryState;
}> = [
  { from: 'PENDING', on: 'success', guard: () => true, to: 'SUCCEEDED' },
  { from: 'PENDING', on: 'failure', guard: (n) => n < MAX_ATTEMPTS, to: 'RETRYING' },
  { from: 'PENDING', on: 'failure', guard: (n) => n >= MAX_ATTEMPTS, to: 'FAILED' },
  { from: 'RETRYING', on: 'success', guard: () => true, to: 'SUCCEEDED' },
  { from: 'RETRYING', on: 'failure', guard: (n) => n < MAX_ATTEMPTS, to: 'RETRYING' },
  { from: 'RETRYING', on: 'failure', guard: (n) => n >= MAX_ATTEMPTS, to: 'FAILED' },
];

export function succeeded(outcome: AttemptOutcome): boolean {
  return 'status' in outcome && outcome.status < 400;
}

/** Whether another attempt may be made now (settled deliveries never go again by themselves). */
export function mayAttempt(progress: DeliveryProgress): boolean {
  return progress.state === 'PENDING' || progress.state === 'RETRYING';
}

/** The delivery after an attempt, and when to try again (seconds from now), if at all. */
export function afterAttempt(progress: DeliveryProgress, outcome: AttemptOutcome): { progress: DeliveryProgress; retryInSeconds: number | null } {
  const attempts = progress.attempts + 1;
  const on = succeeded(outcome) ? 'success' : 'failure';
  const rule = DELIVERY_TRANSITIONS.find((t) => t.from === progress.state && t.on === on && t.guard(attempts));
  if (!rule) throw new Error(`a ${progress.state} delivery takes no more attempts`);
  return {
    progress: { state: rule.to, attempts },
    retryInSeconds: rule.to === 'RETRYING' ? retryDelaySeconds(attempts) : null,
  };
}

/** Backoff from 5 s, doubling: after attempt 1 wait 5 s, after attempt 2 wait 10 s. */
export function retryDelaySeconds(attemptsMade: number): number {
  return FIRST_RETRY_SECONDS * 2 ** (attemptsMade - 1);
}

/** A manual redelivery of a failed delivery starts a fresh round of attempts. */
export function redeliver(progress: DeliveryProgress): DeliveryProgress {
  if (progress.state !== 'FAILED') throw new Error('only a failed delivery is redelivered');
  return { state: 'PENDING', attempts: 0 };
}
