import { DomainError } from '../../core/shared/errors.ts';
import type { Clock } from '../../core/shared/ports.ts';

/**
 * A sliding-window counter per key (client IP), in this process's memory: `hit` records an
 * attempt and says whether it is within `limit` per `windowMs`; `release` takes the latest
 * attempt back (a sign-in that succeeded). With several server processes each keeps its own
 * count.
 */
export function rateLimiter(options: { limit: number; windowMs: number; clock: Clock; maxKeys?: number }) {
  const hits = new Map<string, number[]>();
  const maxKeys = options.maxKeys ?? 10_000;
  const recent = (key: string, now: number) => (hits.get(key) ?? []).filter((at) => at > now - options.windowMs);
  return {
    hit(key: string): boolean {
      const now = options.clock.now().getTime();
      const kept = recent(key, now);
      const allowed = kept.length < options.limit;
      if (allowed) kept.push(now);
      hits.delete(key);
      hits.set(key, kept);
      if (hits.size > maxKeys) {
        // Forget the keys seen longest ago (a Map keeps insertion order; every hit re-inserts its key).
        for (const old of hits.keys()) {
          if (hits.size <= maxKeys) break;
          hits.delete(old);
        }
      }
      return allowed;
    },
    release(key: string): void {
      const kept = hits.get(key);
      kept?.pop();
      if (kept?.length === 0) hits.delete(key);
    },
  };
}

/** 429 in the standard shape (spec 7.1: "body not in the OAuth error shape"), with Retry-After. */
export class TooManyRequests extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', `Too many requests; retry in ${retryAfterSeconds} seconds`);
  }
}
