import { entryKey, retryAfterSeconds, waitMs, type ThrottlePolicy } from '../../core/security/auth-throttle.ts';
import { authFailureStore } from '../postgres/repositories/auth-failure-store.ts';
import type { AppContext } from './context.ts';
import { TooManyRequests } from './rate-limit.ts';

/**
 * Failed authentications, throttled per client address with the counts in Postgres so every
 * server process sees the same ones (issue 19 §5). Only failures touch the database: a valid
 * credential costs nothing here, and a valid one from an address over its limit still passes.
 *
 * Kinds of credential, each counted on its own:
 * - `credential`: an API key or OAuth bearer token on the API (`AUTH_FAILURE_LIMIT` per minute);
 * - `inbound-token`: a helpdesk API inbox's inbound token;
 * - `signed-link`: media and attachment download links, survey links, password set-up links.
 */
export type FailureKind = 'credential' | 'inbound-token' | 'signed-link';

/** `AUTH_FAILURE_LIMIT`'s default: failed credentials per client address and minute. */
export const DEFAULT_AUTH_FAILURE_LIMIT = 100;

const PRUNE_EVERY_MS = 10 * 60_000;
const KEEP_MS = 24 * 3_600_000;

export function authFailures(ctx: AppContext) {
  let cached = instances.get(ctx);
  if (!cached) instances.set(ctx, (cached = create(ctx)));
  return cached;
}

const instances = new WeakMap<AppContext, ReturnType<typeof create>>();

function create(ctx: AppContext) {
  const store = authFailureStore(ctx.db);
  const perMinute: ThrottlePolicy = { type: 'window', limit: ctx.config.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT, windowMs: 60_000 };
  let prunedAt = 0;
  const prune = (now: Date) => {
    // Old rows go now and then (at most every ten minutes per process), off the request's path.
    if (now.getTime() - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = now.getTime();
    store.prune(new Date(now.getTime() - KEEP_MS)).catch(() => {});
  };
  return {
    store,
    prune,
    /**
     * A credential of `kind` failed from `address`: counts it (one upsert) and throws 429 with
     * `Retry-After` instead of the caller's 401 when the address is over its limit.
     */
    async failed(kind: FailureKind, address: string): Promise<void> {
      const now = ctx.clock.now();
      const counts = await store.record([{ kind, key: address, policy: perMinute }], now);
      prune(now);
      // Over the limit when the failures before this one had used it up.
      const count = counts.get(entryKey(kind, address))!;
      const wait = waitMs(perMinute, { ...count, failures: count.failures - 1 }, now);
      if (wait > 0) throw new TooManyRequests(retryAfterSeconds(wait));
    },
  };
}

/**
 * The client's address: the peer of the TCP connection, or with `TRUST_PROXY=<n>` the address
 * the n-th proxy in front of the service saw (the n-th `X-Forwarded-For` entry from the right).
 * Without `TRUST_PROXY` the header is ignored: any client could write it.
 */
export function clientAddress(ctx: AppContext, request: Request, peer?: string | null): string {
  const hops = ctx.config.trustProxy ?? 0;
  if (hops > 0) {
    const forwarded = (request.headers.get('x-forwarded-for') ?? '').split(',').map((part) => part.trim()).filter(Boolean);
    if (forwarded.length >= hops) return forwarded[forwarded.length - hops]!;
  }
  return peer ?? ctx.peerAddress?.(request) ?? 'unknown';
}
