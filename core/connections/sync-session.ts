import type { Actor, IdentityStore } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { DomainError } from '../shared/errors.ts';
import type { Clock, IdGen } from '../shared/ports.ts';
import { signToken, verifyToken, type SignedPayload } from '../shared/signed-token.ts';
import type { Connection } from './connection.ts';
import { connectionNotFound, SESSION_QUEUE, transition, type ConnectionStores } from './connections.ts';
import type { NetworkDriver } from './driver.ts';

/**
 * The sync flow (spec 4.3, 5.6): a member asks for a signed, short-lived, single-use sync token
 * bound to one connection; a companion that holds the account's multi-device session (WhatsApp
 * Web, another Baileys-based gateway) presents it as `Authorization: Bearer` with the session
 * material, and the connection opens with that pairing instead of a new QR scan.
 *
 * - `complete` pairs a connection that has never been paired (no number yet);
 * - `reconnect-complete` re-pairs one that was paired before (logged out, dropped, disconnected)
 *   and must bring the same number back: a connection keeps its number.
 *
 * The token's id is consumed in the transaction that stores the material and moves the
 * connection, so a failed completion (bad material, wrong state) leaves the token usable and a
 * second successful one is impossible.
 */
export const SYNC_TOKEN_USE = 'sync-session';
export const SYNC_TOKEN_MINUTES = 10;

export interface SyncTokenClaims extends SignedPayload<typeof SYNC_TOKEN_USE> {
  /** Single use: the id recorded when the token is redeemed. */
  jti: string;
  connectionId: string;
  workspaceId: string;
  /** The member who asked: the completion acts with their role, checked again then. */
  userId: string;
}

export type SyncMode = 'pair' | 'reconnect';

export interface SyncSessionStores extends ConnectionStores {
  identity: IdentityStore;
  /** Records a used token id; false when it was recorded before. */
  syncTokens: { use(jti: string, expiresAt: Date): Promise<boolean> };
  /** Replaces the connection's stored pairing with imported material, sealed at rest. */
  pairings: { replace(connection: Connection, material: unknown): Promise<void> };
}

export interface SyncSessionDeps {
  clock: Clock;
  ids: IdGen;
  drivers: ReadonlyMap<string, NetworkDriver>;
  signingKey: Uint8Array;
}

/** A sync token for one connection, valid 10 minutes. */
export async function issueSyncToken(
  stores: Pick<ConnectionStores, 'connections'>,
  deps: SyncSessionDeps,
  actor: Actor,
  connectionId: string,
): Promise<{ syncToken: string; expiresAt: Date; connection: Connection }> {
  authorize(actor.roles, 'connections', 'write');
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  importerOf(deps, connection);
  const expiresAt = new Date(deps.clock.now().getTime() + SYNC_TOKEN_MINUTES * 60_000);
  const claims: SyncTokenClaims = {
    use: SYNC_TOKEN_USE,
    exp: Math.floor(expiresAt.getTime() / 1000),
    jti: deps.ids.next(),
    connectionId,
    workspaceId: actor.workspaceId,
    userId: actor.userId,
  };
  return { syncToken: signToken(deps.signingKey, claims), expiresAt, connection };
}

/**
 * Redeems a sync token with the companion's session material. `expectedConnectionId`, when the
 * companion names the connection it means, must be the token's. Runs inside one transaction.
 */
export async function completeSyncSession(
  stores: SyncSessionStores,
  deps: SyncSessionDeps,
  input: { token: string | undefined; material: unknown; mode: SyncMode; expectedConnectionId?: string },
): Promise<Connection> {
  const claims = readSyncToken(deps, input.token);
  if (input.expectedConnectionId !== undefined && input.expectedConnectionId !== claims.connectionId) {
    throw new DomainError('forbidden', 'This sync token was issued for another connection');
  }
  // First, so that a replay is told as such whatever else is wrong with it.
  if (!(await stores.syncTokens.use(claims.jti, new Date(claims.exp * 1000)))) {
    throw new DomainError('conflict', 'The sync token has already been used; ask for a new one');
  }
  const membership = await stores.identity.getMembership(claims.workspaceId, claims.userId);
  if (!membership) throw new DomainError('unauthenticated', 'The member who asked for this sync token no longer belongs to the workspace');
  authorize(membership.roles, 'connections', 'write');

  const connection = await stores.connections.lock(claims.connectionId);
  if (!connection || connection.workspaceId !== claims.workspaceId) throw connectionNotFound(claims.connectionId);
  const imported = importerOf(deps, connection).inspect(input.material);

  if (input.mode === 'pair' && connection.phoneNumber !== null) {
    throw new DomainError('conflict', `Connection ${connection.id} is already paired with +${connection.phoneNumber}; re-pair it with /v3/connections/sync-session/reconnect-complete`);
  }
  if (input.mode === 'reconnect') {
    if (connection.phoneNumber === null) {
      throw new DomainError('conflict', `Connection ${connection.id} has never been paired; pair it with /v3/connections/sync-session/complete`);
    }
    if (imported.phoneNumber !== connection.phoneNumber) {
      throw new DomainError('conflict', `The session material is for +${imported.phoneNumber}, but connection ${connection.id} is the number +${connection.phoneNumber}; a connection keeps its number, so create a new connection for another one`);
    }
  }
  // The machine refuses a CONNECTED connection: its live session uses the current pairing.
  const updated = await transition(stores, deps, connection, 'imported', { phoneNumber: imported.phoneNumber, reason: 'session imported' });
  await stores.pairings.replace(connection, imported.material);
  await stores.outbox.enqueue(SESSION_QUEUE, { connectionId: connection.id, action: 'restart' });
  return updated;
}

/** The claims of a valid token; a forged, expired, misused or malformed one is a 401 (nothing to learn). */
export function readSyncToken(deps: SyncSessionDeps, token: string | undefined): SyncTokenClaims {
  const claims = token && token.length <= 4096 ? verifyToken<SyncTokenClaims>(deps.signingKey, token, SYNC_TOKEN_USE, deps.clock.now()) : undefined;
  if (!claims || typeof claims.jti !== 'string' || typeof claims.connectionId !== 'string' || typeof claims.workspaceId !== 'string' || typeof claims.userId !== 'string') {
    throw new DomainError('unauthenticated', 'The sync token is invalid or has expired');
  }
  return claims;
}

function importerOf(deps: Pick<SyncSessionDeps, 'drivers'>, connection: Connection) {
  const importer = deps.drivers.get(connection.driver)?.sessionImport;
  if (!importer) {
    throw new DomainError('unprocessable', `A ${connection.driver} connection cannot take over a session from another client; only multi-device (unofficial) connections can`);
  }
  return importer;
}
