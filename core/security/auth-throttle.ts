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
  /** `backoff`: no attempt is admitted before this time. */
  blockedUntil: Date | null;
}

/** `window`: a failure at `now` starts a new window when the current one began before this. */
export const windowCutoff = (policy: Extract<ThrottlePolicy, { type: 'window' }>, now: Date) => new Date(now.getTime() - policy.windowMs);

/** `window`: milliseconds the client must wait before its next attempt; 0 when it may try now. */
export function waitMs(policy: Extract<ThrottlePolicy, { type: 'window' }>, count: FailureCount | undefined, now: Date): number {
  if (!count) return 0;
  const end = count.startedAt.getTime() + policy.windowMs;
  return count.failures >= policy.limit && end > now.getTime() ? end - now.getTime() : 0;
}

/**
 * `backoff`: may an attempt be made now? Admitted, it counts at once (before the slow password
 * check, so parallel guesses are counted too) and may block the next ones; a successful attempt
 * is forgiven afterwards. Refused, nothing changes: waiting clients are not pushed further back.
 */
export function admitAttempt(
  policy: Extract<ThrottlePolicy, { type: 'backoff' }>,
  count: FailureCount | undefined,
  now: Date,
): { admitted: true; count: FailureCount } | { admitted: false; waitMs: number } {
  const at = now.getTime();
  const current = count && count.updatedAt.getTime() > at - policy.resetMs ? count : undefined;
  if (current?.blockedUntil && current.blockedUntil.getTime() > at) return { admitted: false, waitMs: current.blockedUntil.getTime() - at };
  const failures = (current?.failures ?? 0) + 1;
  const delay = failures >= policy.free ? Math.min(policy.baseMs * 2 ** Math.min(failures - policy.free, 30), policy.capMs) : 0;
  return {
    admitted: true,
    count: { failures, startedAt: current?.startedAt ?? now, updatedAt: now, blockedUntil: delay > 0 ? new Date(at + delay) : null },
  };
}

/** `Retry-After` in whole seconds (at least 1). */
export const retryAfterSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Where the counts are kept. */
export interface FailureStore {
  /** `window`: adds one failure to the key (one statement) and answers the count after it. */
  record(entry: { kind: string; key: string; policy: Extract<ThrottlePolicy, { type: 'window' }> }, now: Date): Promise<FailureCount>;
  /** `backoff`: `admitAttempt` on every key at once (all admitted, or none changed); the longest wait when refused. */
  admit(entries: Array<{ kind: string; key: string; policy: Extract<ThrottlePolicy, { type: 'backoff' }> }>, now: Date): Promise<{ admitted: true } | { admitted: false; waitMs: number }>;
  /** Takes one admitted attempt back from each key (it succeeded). */
  forgive(entries: Array<{ kind: string; key: string }>): Promise<void>;
  clear(entries: Array<{ kind: string; key: string }>): Promise<void>;
  read(entries: Array<{ kind: string; key: string }>): Promise<Map<string, FailureCount>>;
}

/** The map key of `record` and `read` answers. */
export const entryKey = (kind: string, key: string) => `${kind}\u0000${key}`;
