import type { TransitionTable } from '../shared/transition-table.ts';
import type { Scope } from './scopes.ts';

/**
 * The OAuth artefacts of spec 3.3 and their lifetimes (section 8), with each state machine as
 * an explicit transition table. Stores apply a transition only from the state the table names
 * (`useCode` and `rotateToken` are compare-and-set), so two racing requests cannot both win.
 */
export const CODE_TTL_SECONDS = 60;
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
export const PENDING_REQUEST_TTL_SECONDS = 600;

export type CodeState = 'ISSUED' | 'EXCHANGED';
export type CodeEvent = 'exchange';
export const CODE_TRANSITIONS: TransitionTable<CodeState, CodeEvent> = {
  ISSUED: { exchange: 'EXCHANGED' },
  // A second exchange is a replay: refused, and the whole grant is revoked.
  EXCHANGED: {},
};

export type TokenState = 'ACTIVE' | 'ROTATED' | 'REVOKED';
export type TokenEvent = 'rotate' | 'revoke';
export const TOKEN_TRANSITIONS: TransitionTable<TokenState, TokenEvent> = {
  // Only refresh tokens rotate; presenting a ROTATED one is a replay that revokes the grant.
  ACTIVE: { rotate: 'ROTATED', revoke: 'REVOKED' },
  // A used refresh token keeps its mark after its grant is revoked, so a later presentation is
  // still recognised as a replay (and kills whatever the grant holds by then).
  ROTATED: {},
  REVOKED: {},
};

export type PendingState = 'PENDING' | 'DECIDED' | 'EXPIRED';
export type PendingEvent = 'decide' | 'expire';
export const PENDING_TRANSITIONS: TransitionTable<PendingState, PendingEvent> = {
  PENDING: { decide: 'DECIDED', expire: 'EXPIRED' },
  DECIDED: {},
  EXPIRED: {},
};

export { nextState } from '../shared/transition-table.ts';

/** An authorization request waiting for the person (10 minutes). */
export interface PendingRequest {
  id: string;
  clientId: string;
  redirectUri: string;
  /** The redirect URI was named in the request (then the token request must repeat it). */
  scopes: Scope[];
  state: string | null;
  codeChallenge: string;
  resource: string | null;
  prompt: 'consent' | 'none' | null;
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
}

export function pendingState(request: PendingRequest, now: Date): PendingState {
  if (request.decidedAt) return 'DECIDED';
  return request.expiresAt.getTime() <= now.getTime() ? 'EXPIRED' : 'PENDING';
}

/** A person's approval of a client for one workspace: the grant its codes and tokens hang from. */
export interface Consent {
  id: string;
  clientId: string;
  userId: string;
  workspaceId: string;
  scopes: Scope[];
  createdAt: Date;
  updatedAt: Date;
}

export interface AuthorizationCode {
  hash: string;
  consentId: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: Scope[];
  resource: string | null;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export function codeState(code: AuthorizationCode): CodeState {
  return code.usedAt ? 'EXCHANGED' : 'ISSUED';
}

export interface IssuedToken {
  id: string;
  hash: string;
  kind: 'ACCESS' | 'REFRESH';
  state: TokenState;
  consentId: string;
  clientId: string;
  userId: string;
  workspaceId: string;
  scopes: Scope[];
  /** Audience (RFC 8707): the token works only under this URL; null = across the API. */
  resource: string | null;
  createdAt: Date;
  /** Null when the client has access-token expiry switched off (section 8). */
  expiresAt: Date | null;
}

/** Alive = active and not past its expiry. */
export function tokenAlive(token: IssuedToken, now: Date): boolean {
  return token.state === 'ACTIVE' && (token.expiresAt === null || token.expiresAt.getTime() > now.getTime());
}
