import { forbidden, notFound, unauthorized } from '../shared/errors.ts';
import type { Clock } from '../shared/ports.ts';
import { constantTimeEqual, hashSecret } from '../tokens/secret.ts';
import type { Actor, IdentityStore } from './identity.ts';

/**
 * Sign-in sessions of people (the `/signin` page's cookie): with one, the API and the helpdesk
 * websocket act as that member, like an API key of theirs. A session ends when idle for
 * `SESSION_IDLE_MS` (each use moves that forward) and at the latest `SESSION_ABSOLUTE_MS` after
 * sign-in, whatever the use: long enough for an agent's working day without signing in again,
 * short enough that a forgotten browser does not stay signed in for good.
 */
export const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 14 * 24 * 60 * 60 * 1000;
/** Recording use once a minute is enough, and spares a write on every request. */
const TOUCH_INTERVAL_MS = 60_000;
/** The longest user agent kept (a header is the client's to fill). */
const USER_AGENT_MAX = 300;

export interface WebSession {
  /** The public id (listing, ending); the cookie's value is never kept, only its hash. */
  id: string;
  idHash: string;
  userId: string;
  /** What every write made with the session carries (`X-CSRF-Token`, or the pages' form field). */
  csrf: string;
  createdAt: Date;
  lastSeenAt: Date;
  /** The idle expiry. */
  expiresAt: Date;
  absoluteExpiresAt: Date;
  userAgent: string | null;
}

export interface SessionStore {
  insert(session: WebSession): Promise<void>;
  findByHash(idHash: string): Promise<WebSession | undefined>;
  touch(id: string, lastSeenAt: Date, expiresAt: Date): Promise<void>;
  /** The person's live sessions at `now`, most recently used first. */
  listOf(userId: string, now: Date): Promise<WebSession[]>;
  /** Ends one session of the person; false when they have none of that id. */
  delete(userId: string, id: string): Promise<boolean>;
  /** Ends every session of the person but `keep` (when given); answers how many ended. */
  deleteAllOf(userId: string, keep?: string): Promise<number>;
  /** Drops the person's sessions that expired before `now` (housekeeping). */
  deleteExpiredOf(userId: string, now: Date): Promise<void>;
}

/** Whether the session is still live at `now` (idle and absolute expiry). */
export function sessionLive(session: Pick<WebSession, 'expiresAt' | 'absoluteExpiresAt'>, now: Date): boolean {
  return now.getTime() < session.expiresAt.getTime() && now.getTime() < session.absoluteExpiresAt.getTime();
}

/** A new session's record; `value` is the cookie's secret (never stored). */
export function newSession(input: { id: string; value: string; userId: string; csrf: string; now: Date; userAgent?: string | null }): WebSession {
  const absoluteExpiresAt = new Date(input.now.getTime() + SESSION_ABSOLUTE_MS);
  return {
    id: input.id,
    idHash: hashSecret(input.value),
    userId: input.userId,
    csrf: input.csrf,
    createdAt: input.now,
    lastSeenAt: input.now,
    expiresAt: earlier(new Date(input.now.getTime() + SESSION_IDLE_MS), absoluteExpiresAt),
    absoluteExpiresAt,
    userAgent: input.userAgent ? input.userAgent.slice(0, USER_AGENT_MAX) : null,
  };
}

/** The live session a cookie value names (its use recorded, its idle expiry moved), else undefined. */
export async function findLiveSession(store: SessionStore, deps: { clock: Clock }, value: string): Promise<WebSession | undefined> {
  const session = await store.findByHash(hashSecret(value));
  const now = deps.clock.now();
  if (!session || !sessionLive(session, now)) return undefined;
  if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) {
    const expiresAt = earlier(new Date(now.getTime() + SESSION_IDLE_MS), session.absoluteExpiresAt);
    await store.touch(session.id, now, expiresAt);
    return { ...session, lastSeenAt: now, expiresAt };
  }
  return session;
}

export interface SessionStores {
  sessions: SessionStore;
  identity: IdentityStore;
}

/** A member acting through a sign-in session. */
export type SessionActor = Actor & { sessionId: string };

/**
 * The member a live session acts as: in `accountId`'s workspace (the `X-Account-Id` header) when
 * given and they belong to it (else 403, as for an API key), otherwise in their default one: the
 * first (oldest) workspace that is not their personal one, else their personal one. 401 when the
 * session is not live or the person belongs to no workspace.
 */
export async function authenticateSession(
  stores: SessionStores,
  deps: { clock: Clock },
  value: string,
  accountId: string | undefined,
): Promise<{ actor: SessionActor; session: WebSession }> {
  const session = await findLiveSession(stores.sessions, deps, value);
  if (!session) throw unauthorized('The sign-in session has ended; sign in again');
  if (accountId) {
    const membership = await stores.identity.getMembership(accountId, session.userId);
    if (!membership) throw forbidden('You are not a member of the workspace named in X-Account-Id');
    return { actor: { userId: session.userId, workspaceId: accountId, roles: membership.roles, sessionId: session.id }, session };
  }
  const workspaces = await stores.identity.listWorkspacesOf(session.userId);
  // Everyone has a personal workspace; the one they were invited to (or made) is where they work.
  const chosen = workspaces.find((w) => !w.isPersonal) ?? workspaces[0];
  if (!chosen) throw unauthorized('You belong to no workspace');
  return { actor: { userId: session.userId, workspaceId: chosen.id, roles: chosen.roles, sessionId: session.id }, session };
}

/** Whether `submitted` is the session's CSRF token (constant time). */
export function csrfTokenMatches(session: Pick<WebSession, 'csrf'>, submitted: unknown): boolean {
  return typeof submitted === 'string' && submitted.length > 0 && constantTimeEqual(session.csrf, submitted);
}

/** What a member sees of one of their sessions. */
export interface SessionView {
  id: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  absoluteExpiresAt: Date;
  userAgent: string | null;
  current: boolean;
}

/** Every member lists their own sessions (a session belongs to the person, in all their workspaces). */
export async function listOwnSessions(store: SessionStore, deps: { clock: Clock }, actor: Actor & { sessionId?: string }): Promise<SessionView[]> {
  const sessions = await store.listOf(actor.userId, deps.clock.now());
  return sessions.map((s) => ({
    id: s.id,
    createdAt: s.createdAt,
    lastSeenAt: s.lastSeenAt,
    expiresAt: s.expiresAt,
    absoluteExpiresAt: s.absoluteExpiresAt,
    userAgent: s.userAgent,
    current: s.id === actor.sessionId,
  }));
}

/** Ends one of the actor's own sessions (the current one included); another person's is 404. */
export async function endOwnSession(store: SessionStore, actor: Actor, id: string): Promise<void> {
  if (!(await store.delete(actor.userId, id))) throw notFound(`Session ${id} not found`);
}

/** Ends every session of the actor but the one making the request; answers how many ended. */
export async function endOtherSessions(store: SessionStore, actor: Actor & { sessionId?: string }): Promise<number> {
  return store.deleteAllOf(actor.userId, actor.sessionId);
}

/**
 * An Owner signs a member of their workspace out everywhere: every sign-in session of that
 * person ends (a session is the person's, whichever workspace it is used in). API keys are
 * credentials of their own and are managed on their own routes.
 */
export async function signOutMemberEverywhere(stores: SessionStores, actor: Actor, userId: string): Promise<number> {
  if (!actor.roles.includes('OWNER')) throw forbidden('Only an Owner signs a member out everywhere');
  const member = await stores.identity.getMembership(actor.workspaceId, userId);
  if (!member) throw notFound(`Member ${userId} not found`);
  return stores.sessions.deleteAllOf(userId);
}

function earlier(a: Date, b: Date): Date {
  return a.getTime() <= b.getTime() ? a : b;
}
