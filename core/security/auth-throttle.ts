/**
 * Throttling of failed authentications (issue 19 §5): how long a client must wait, given the
 * failures counted against one key (a client address, an account, an account from an address).
 * Pure: the counts live in a store (Postgres, so every server process sees the same ones).
 *
 * - `window`: `limit` failures per `windowMs` (counted from the first failure of the window);
 *   the next one waits for the window to end. For credentials nobody can guess (API keys,
 *   tokens, signed links): the limit only stops a client that keeps trying.
 * - `backoff`: `free` failures, then each further one doubles the wait from `baseMs` up to
 *   `capMs`; the count starts over after `resetMs` without a failure. For passwords: a person
 *   who mistypes a few times barely notices, a guesser slows down exponentially, and nobody is
 *   locked out for longer than `capMs`.
 */
export type ThrottlePolicy =
  | { type: 'window'; limit: number; windowMs: number }
  | { type: 'backoff'; free: number; baseMs: number; capMs: number; resetMs: number };

export interface FailureCount {
  failures: number;
  /** The first failure counted (window start). */
  startedAt: Date;
  /** The latest failure counted. */
  updatedAt: Date;
}

/** What a new failure at `now` starts over from: the window's start, or the last failure's time. */
export function resetCutoff(policy: ThrottlePolicy, now: Date): { column: 'startedAt' | 'updatedAt'; before: Date } {
  return policy.type === 'window'
    ? { column: 'startedAt', before: new Date(now.getTime() - policy.windowMs) }
    : { column: 'updatedAt', before: new Date(now.getTime() - policy.resetMs) };
}

/** Milliseconds the client must wait before its next attempt counts; 0 when it may try now. */
export function waitMs(policy: ThrottlePolicy, count: FailureCount | undefined, now: Date): number {
  if (!count) return 0;
  const at = now.getTime();
  if (policy.type === 'window') {
    const end = count.startedAt.getTime() + policy.windowMs;
    return count.failures >= policy.limit && end > at ? end - at : 0;
  }
  if (count.updatedAt.getTime() <= at - policy.resetMs || count.failures < policy.free) return 0;
  const delay = Math.min(policy.baseMs * 2 ** Math.min(count.failures - policy.free, 30), policy.capMs);
  return Math.max(0, count.updatedAt.getTime() + delay - at);
}

/** `Retry-After` in whole seconds (at least 1). */
export const retryAfterSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Where the counts are kept; `record` adds one failure to each key in one statement. */
export interface FailureStore {
  record(entries: Array<{ kind: string; key: string; policy: ThrottlePolicy }>, now: Date): Promise<Map<string, FailureCount>>;
  read(entries: Array<{ kind: string; key: string }>): Promise<Map<string, FailureCount>>;
  clear(entries: Array<{ kind: string; key: string }>): Promise<void>;
}

/** The map key of `record` and `read` answers. */
export const entryKey = (kind: string, key: string) => `${kind}\u0000${key}`;
