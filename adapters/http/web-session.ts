import { authenticateSession, findLiveSession, newSession, SESSION_ABSOLUTE_MS, csrfTokenMatches, type SessionActor, type WebSession as StoredSession } from '../../core/identity/sessions.ts';
import { unauthorized } from '../../core/shared/errors.ts';
import { isUuid } from '../../core/shared/ids.ts';
import { baseStores } from '../postgres/stores.ts';
import { base64url, hashSecret } from '../../core/tokens/secret.ts';
import { sessionStore } from '../postgres/repositories/session-store.ts';
import type { AppContext } from './context.ts';
import { clearCookie, cookieName, readCookie, setCookie } from './pages/cookies.ts';

/**
 * Sign-in sessions (core/identity/sessions.ts): of the server-rendered pages (sign-in, account,
 * OAuth consent), and of the API and the helpdesk websocket (adapters/http/auth.ts). The cookie
 * holds 32 random bytes; the table `web_sessions` holds only their SHA-256, the person, and a
 * per-session CSRF token that every form posted while signed in, and every API write made with
 * the cookie (`X-CSRF-Token`), must carry. Idle and absolute expiry: see the core.
 */
export interface WebSession {
  id: string;
  userId: string;
  csrf: string;
}

const COOKIE = 'sb_session';
/** base64url of 32 bytes. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** The session cookie's name under this public URL (`__Host-sb_session` when Secure). */
export function sessionCookieName(ctx: AppContext): string {
  return cookieName(ctx.config.publicUrl, COOKIE);
}

/** The well-formed session cookie value of a Cookie header, if any. */
export function sessionCookieValue(ctx: AppContext, request: Request): string | undefined {
  const value = readCookie(request, sessionCookieName(ctx));
  return value && COOKIE_VALUE.test(value) ? value : undefined;
}

/** The headers of a websocket handshake (Socket.IO's `handshake.headers`). */
export type HandshakeHeaders = Record<string, string | string[] | undefined>;

/**
 * The member a websocket handshake's session cookie acts as (the `/helpdesk` namespace, when no
 * `apikey` is given): undefined without the cookie; 401 when the session is not live or the
 * handshake did not come from PUBLIC_URL's origin (`Origin`, else `Referer`: a page of another
 * site cannot open a socket with this person's cookie); 403 for an `X-Account-Id` workspace they
 * are not a member of. Each call checks afresh (the socket's re-checks call it again).
 */
export async function authenticateHandshakeSession(ctx: AppContext, headers: HandshakeHeaders): Promise<SessionActor | undefined> {
  const cookie = first(headers['cookie']);
  if (!cookie) return undefined;
  const value = sessionCookieValue(ctx, new Request(ctx.config.publicUrl, { headers: { cookie } }));
  if (!value) return undefined;
  const expected = originOf(ctx.config.publicUrl);
  const origin = first(headers['origin']) ?? originOf(first(headers['referer']) ?? '');
  if (expected === undefined || origin?.trim() !== expected) throw unauthorized('A websocket opened with a sign-in session must come from this service\'s own origin');
  const accountId = first(headers['x-account-id'])?.trim() || undefined;
  if (accountId !== undefined && !isUuid(accountId)) throw unauthorized('X-Account-Id names no workspace');
  return (await authenticateSession(baseStores(ctx.db), ctx, value, accountId?.toLowerCase())).actor;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `scheme://host[:port]` of a URL, undefined when it is none. */
export function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** The signed-in person of this request, when its session cookie names a live session. */
export async function currentSession(ctx: AppContext, request: Request): Promise<WebSession | undefined> {
  const value = sessionCookieValue(ctx, request);
  if (!value) return undefined;
  const found = await findLiveSession(sessionStore(ctx.db), ctx, value);
  return found && view(found);
}

/**
 * A new session for `userId` (always a new id: no fixation); send `setCookie` with the answer.
 * `request` is the sign-in's, for the user agent shown in the member's list of sessions.
 */
export async function startSession(ctx: AppContext, userId: string, request?: Request): Promise<{ setCookie: string; session: WebSession }> {
  const value = base64url(ctx.random.bytes(32));
  const csrf = base64url(ctx.random.bytes(32));
  const now = ctx.clock.now();
  const store = sessionStore(ctx.db);
  // Housekeeping: this person's expired sessions go as a new one starts. (No transaction of
  // our own: callers may hold one, and on PGlite a second would wait for it.)
  await store.deleteExpiredOf(userId, now);
  const session = newSession({ id: ctx.ids.next(), value, userId, csrf, now, userAgent: request?.headers.get('user-agent') });
  await store.insert(session);
  // The cookie lives as long as the session can; the idle expiry is the server's to enforce.
  return { setCookie: setCookie(ctx.config.publicUrl, COOKIE, value, SESSION_ABSOLUTE_MS / 1000), session: view(session) };
}

/** Ends the request's session (if any) and returns the Set-Cookie value that clears the cookie. */
export async function endSession(ctx: AppContext, request: Request): Promise<string> {
  const value = sessionCookieValue(ctx, request);
  if (value) await ctx.db.deleteFrom('web_sessions').where('id_hash', '=', hashSecret(value)).execute();
  return clearCookie(ctx.config.publicUrl, COOKIE);
}

/** Whether a submitted form field is this session's CSRF token (constant time). */
export function csrfMatches(session: WebSession, submitted: unknown): boolean {
  return csrfTokenMatches(session, submitted);
}

function view(s: StoredSession): WebSession {
  return { id: s.id, userId: s.userId, csrf: s.csrf };
}
