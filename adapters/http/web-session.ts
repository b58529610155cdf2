import { base64url, constantTimeEqual, hashSecret } from '../../core/tokens/secret.ts';
import type { AppContext } from './context.ts';
import { clearCookie, cookieName, readCookie, setCookie } from './pages/cookies.ts';

/**
 * Sign-in sessions of the server-rendered pages (sign-in, account, OAuth consent). The cookie
 * holds 32 random bytes; the table `web_sessions` holds only their SHA-256, the person, and a
 * per-session CSRF token that every form posted while signed in must carry. Lifetime 12 hours.
 */
export interface WebSession {
  userId: string;
  csrf: string;
}

const COOKIE = 'sb_session';
const LIFETIME_MS = 12 * 60 * 60 * 1000;
/** base64url of 32 bytes. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** The signed-in person of this request, when its session cookie names a live session. */
export async function currentSession(ctx: AppContext, request: Request): Promise<WebSession | undefined> {
  const value = readCookie(request, cookieName(ctx.config.publicUrl, COOKIE));
  if (!value || !COOKIE_VALUE.test(value)) return undefined;
  const row = await ctx.db
    .selectFrom('web_sessions')
    .select(['user_id', 'csrf'])
    .where('id_hash', '=', hashSecret(value))
    .where('expires_at', '>', ctx.clock.now())
    .executeTakeFirst();
  return row && { userId: row.user_id, csrf: row.csrf };
}

/** A new session for `userId` (always a new id: no fixation); send `setCookie` with the answer. */
export async function startSession(ctx: AppContext, userId: string): Promise<{ setCookie: string; session: WebSession }> {
  const value = base64url(ctx.random.bytes(32));
  const csrf = base64url(ctx.random.bytes(32));
  const now = ctx.clock.now();
  // Housekeeping: this person's expired sessions go as a new one starts. (No transaction of
  // our own: callers may hold one, and on PGlite a second would wait for it.)
  await ctx.db.deleteFrom('web_sessions').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
  await ctx.db
    .insertInto('web_sessions')
    .values({ id_hash: hashSecret(value), user_id: userId, csrf, created_at: now, expires_at: new Date(now.getTime() + LIFETIME_MS) })
    .execute();
  return { setCookie: setCookie(ctx.config.publicUrl, COOKIE, value, LIFETIME_MS / 1000), session: { userId, csrf } };
}

/** Ends the request's session (if any) and returns the Set-Cookie value that clears the cookie. */
export async function endSession(ctx: AppContext, request: Request): Promise<string> {
  const value = readCookie(request, cookieName(ctx.config.publicUrl, COOKIE));
  if (value && COOKIE_VALUE.test(value)) await ctx.db.deleteFrom('web_sessions').where('id_hash', '=', hashSecret(value)).execute();
  return clearCookie(ctx.config.publicUrl, COOKIE);
}

/** Whether a submitted form field is this session's CSRF token (constant time). */
export function csrfMatches(session: WebSession, submitted: unknown): boolean {
  return typeof submitted === 'string' && submitted.length > 0 && constantTimeEqual(session.csrf, submitted);
}
