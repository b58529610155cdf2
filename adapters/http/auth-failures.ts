import { retryAfterSeconds, waitMs, type ThrottlePolicy } from '../../core/security/auth-throttle.ts';
import { DomainError } from '../../core/shared/errors.ts';
import { authFailureStore } from '../postgres/repositories/auth-failure-store.ts';
import { onePerContext, type AppContext } from './context.ts';
import { TooManyRequests } from './rate-limit.ts';

/**
 * Failed authentications, throttled with the counts in Postgres so that every server process
 * sees the same ones (issue 19 §5).
 *
 * Credentials nobody can guess — an API key or OAuth token (`credential`), a helpdesk inbox's
 * inbound token (`inbound-token`), a signed link (`signed-link`) — are limited per client
 * address to `AUTH_FAILURE_LIMIT` failures a minute. Only failures touch the database: a valid
 * credential costs nothing here, and a valid one from an address over its limit still passes.
 *
 * Passwords (`signIn`) are throttled per account from one address, per address, and per account
 * from anywhere, with a doubling delay instead of a block (see SIGN_IN_POLICIES).
 */
export type FailureKind = 'credential' | 'inbound-token' | 'signed-link';

const DEFAULT_AUTH_FAILURE_LIMIT = 100;

/** Sign-in throttles: `free` failures, then a wait that doubles from 1 s up to `capMs`; forgotten after an hour's quiet. */
export const SIGN_IN_POLICIES = {
  /** One account from one address: a guesser at one account. */
  accountFromAddress: { type: 'backoff', free: 5, baseMs: 1_000, capMs: 15 * 60_000, resetMs: 3_600_000 },
  /** One address, any account: guessing across accounts (password spraying). */
  address: { type: 'backoff', free: 30, baseMs: 1_000, capMs: 15 * 60_000, resetMs: 3_600_000 },
  /**
   * One account, any address: guessing from many addresses. Not applied from an address the
   * person has signed in from before, so such an attack does not lock the real person out.
   */
  account: { type: 'backoff', free: 10, baseMs: 1_000, capMs: 5 * 60_000, resetMs: 3_600_000 },
} as const satisfies Record<string, ThrottlePolicy>;

/**
 * Password reset requests (`/forgot-password`): every request counts (none is "forgiven"), per
 * account and per address, with the sign-in's doubling delay once the free ones are used up, so
 * nobody floods an inbox or the mail server.
 */
export const PASSWORD_RESET_POLICIES = {
  account: { type: 'backoff', free: 3, baseMs: 60_000, capMs: 60 * 60_000, resetMs: 3_600_000 },
  address: { type: 'backoff', free: 20, baseMs: 1_000, capMs: 15 * 60_000, resetMs: 3_600_000 },
} as const satisfies Record<string, ThrottlePolicy>;

/** Addresses a person signed in from are remembered this long. */
const KNOWN_ADDRESS: ThrottlePolicy & { type: 'window' } = { type: 'window', limit: Number.MAX_SAFE_INTEGER, windowMs: 90 * 86_400_000 };
const PRUNE_EVERY_MS = 10 * 60_000;
const KEEP_MS = 86_400_000;

export const authFailures = onePerContext(create);

function create(ctx: AppContext) {
  const store = authFailureStore(ctx.db);
  const perMinute = { type: 'window', limit: ctx.config.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT, windowMs: 60_000 } as const;
  let prunedAt = 0;
  const prune = (now: Date) => {
    // Now and then (at most every ten minutes per process), off the request's path.
    if (now.getTime() - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = now.getTime();
    const kept = { kind: 'signin-known-address', idleSince: new Date(now.getTime() - KNOWN_ADDRESS.windowMs) };
    store.prune(new Date(now.getTime() - KEEP_MS), kept).catch(() => {});
  };

  return {
    /**
     * A credential of `kind` failed from `address`: counts it (one upsert) and throws 429 with
     * `Retry-After`, instead of the caller's own refusal, when the address is over its limit.
     */
    async failed(kind: FailureKind, address: string): Promise<void> {
      const now = ctx.clock.now();
      const count = await store.record({ kind, key: address, policy: perMinute }, now);
      prune(now);
      // Over the limit when the failures before this one had used it up.
      const wait = waitMs(perMinute, { ...count, failures: count.failures - 1 }, now);
      if (wait > 0) throw new TooManyRequests(retryAfterSeconds(wait));
    },

    /** Before a reset mail is sent: admitted requests count at once; refused ones wait `retryAfterSeconds`. */
    async passwordReset(email: string, address: string): Promise<{ admitted: true } | { admitted: false; retryAfterSeconds: number }> {
      const now = ctx.clock.now();
      const decision = await store.admit(
        [
          { kind: 'reset-account', key: email.trim().toLowerCase(), policy: PASSWORD_RESET_POLICIES.account },
          { kind: 'reset-address', key: address, policy: PASSWORD_RESET_POLICIES.address },
        ],
        now,
      );
      prune(now);
      return decision.admitted ? { admitted: true } : { admitted: false, retryAfterSeconds: retryAfterSeconds(decision.waitMs) };
    },

    /**
     * Before a password is checked: admitted attempts count at once (parallel guesses too); call
     * `succeeded` when the password was right. Refused: wait `retryAfterSeconds`, nothing counted.
     */
    async signIn(email: string, address: string): Promise<{ admitted: true; succeeded(): Promise<void> } | { admitted: false; retryAfterSeconds: number }> {
      const now = ctx.clock.now();
      const account = email.trim().toLowerCase();
      const pair = { kind: 'signin-account-address', key: `${account} ${address}` };
      const perAddress = { kind: 'signin-address', key: address };
      const perAccount = { kind: 'signin-account', key: account };
      const known = { kind: 'signin-known-address', key: pair.key };
      const knownAddress = (await store.read([known])).size > 0;
      const entries = [
        { ...pair, policy: SIGN_IN_POLICIES.accountFromAddress },
        { ...perAddress, policy: SIGN_IN_POLICIES.address },
        ...(knownAddress ? [] : [{ ...perAccount, policy: SIGN_IN_POLICIES.account }]),
      ];
      const decision = await store.admit(entries, now);
      prune(now);
      if (!decision.admitted) return { admitted: false, retryAfterSeconds: retryAfterSeconds(decision.waitMs) };
      return {
        admitted: true,
        async succeeded() {
          await store.clear([pair]);
          await store.forgive(knownAddress ? [perAddress] : [perAddress, perAccount]);
          await store.record({ ...known, policy: KNOWN_ADDRESS }, ctx.clock.now());
        },
      };
    },
  };
}

/**
 * When `error` refuses a credential of `kind` (unauthenticated, or not found for a link or inbox
 * that names nothing: guessing), counts the failure against the client's address; 429 once over the limit.
 * Then the caller rethrows `error`.
 */
export async function countRefusal(ctx: AppContext, kind: FailureKind, request: Request, error: unknown, peer?: string | null): Promise<void> {
  if (error instanceof DomainError && (error.kind === 'unauthenticated' || error.kind === 'not_found')) await authFailures(ctx).failed(kind, clientAddress(ctx, request, peer));
}

/** Checks a signed link's token (`check` throws when it is refused); a refusal counts towards the client's failure limit. */
export async function checkSignedLink(ctx: AppContext, request: Request, peer: string | null | undefined, check: () => void): Promise<void> {
  try {
    check();
  } catch (error) {
    await countRefusal(ctx, 'signed-link', request, error, peer);
    throw error;
  }
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
