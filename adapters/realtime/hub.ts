import { errorField, log } from '../logging/logger.ts';
import type { Server } from 'socket.io';
import { postgresHub } from './postgres-hub.ts';

/** The Socket.IO server of a server process; plugins add their namespaces to it. */
export type RealtimeServer = Server;

/**
 * The realtime port: emit an event to rooms of a namespace, from any process (a worker job, a
 * request handler, a timer). Every socket in any of the rooms gets the event once, on whichever
 * server process it is connected to.
 */
export interface RealtimeHub {
  emit(namespace: string, rooms: readonly string[], event: string, payload: unknown): Promise<void>;
  /**
   * Tells every server process that someone's access changed (a token revoked or rotated, a
   * member removed or their role changed, a password changed, an inbox's members replaced), so
   * each re-checks the matching sockets at once instead of at their next heartbeat. Sent after
   * the write commits; a signal lost to a crash in between is caught by the heartbeat's re-check.
   */
  accessChanged(change: AccessChange): Promise<void>;
}

/**
 * Whose access changed: the sockets of this member of this workspace; of every member of the
 * workspace (no `userId`: a token revoked, whose holder the route does not know; an inbox's
 * members replaced); or of this person in every workspace (no `workspaceId`: a password).
 */
export type AccessChange = { workspaceId: string; userId?: string } | { workspaceId?: undefined; userId: string };

/**
 * The server-side Socket.IO event that carries an `AccessChange` to every server process, on the
 * main namespace (`io.serverSideEmit`: never sent to a client).
 */
export const ACCESS_CHANGED = 'switchboard:access-changed';

/** Sends the signal after a committed write: a failure is logged, not thrown (the write stands; the heartbeat catches up). */
export async function announceAccessChange(hub: RealtimeHub | undefined, change: AccessChange): Promise<void> {
  try {
    await hub?.accessChanged(change);
  } catch (error) {
    log.error({ error: errorField(error) }, 'realtime access change not announced');
  }
}

/** The change a server process received, when it is one (it crossed the database as JSON). */
export function parseAccessChange(value: unknown): AccessChange | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { workspaceId, userId } = value as Record<string, unknown>;
  const w = typeof workspaceId === 'string' ? workspaceId : undefined;
  const u = typeof userId === 'string' ? userId : undefined;
  if (w) return u ? { workspaceId: w, userId: u } : { workspaceId: w };
  return u ? { userId: u } : undefined;
}

/** Whether a member's socket (`workspaceId`, `userId`) is one the change names. */
export function accessChangeConcerns(change: AccessChange, socket: { workspaceId: string; userId: string }): boolean {
  return (change.workspaceId === undefined || change.workspaceId === socket.workspaceId) && (change.userId === undefined || change.userId === socket.userId);
}

/** The hub as its owner (the runtime) holds it. */
export interface OpenRealtimeHub extends RealtimeHub {
  /**
   * A server process hands over its Socket.IO server. The embedded hub delivers through it; on
   * Postgres this changes nothing (NOTIFY already reaches this process's adapter). Returns the
   * undo, for the server's stop.
   */
  attach(io: RealtimeServer): () => void;
  close(): Promise<void>;
}

/**
 * On Postgres, `@socket.io/postgres-emitter` over a pool of its own: a worker-only process reaches
 * sockets on every server process. On the embedded database there is one process, server and
 * worker together, so the hub emits on its own Socket.IO server, and does nothing while there
 * is none (the CLI, a worker started without a server).
 */
export function openRealtimeHub(options: { databaseUrl?: string }): OpenRealtimeHub {
  return options.databaseUrl ? postgresHub(options.databaseUrl) : inProcessHub();
}

export function inProcessHub(): OpenRealtimeHub {
  let server: RealtimeServer | undefined;
  return {
    async emit(namespace, rooms, event, payload) {
      // No rooms would mean every socket of the namespace: never what a caller means. And
      // `of()` would create a namespace no plugin registered (open to anyone, without auth).
      if (!server || rooms.length === 0 || !server._nsps.has(namespace)) return;
      server.of(namespace).to([...rooms]).emit(event, payload);
    },
    async accessChanged(change) {
      // As the Postgres adapter hands a server-side emit to the namespace when its NOTIFY arrives.
      server?.sockets._onServerSideEmit([ACCESS_CHANGED, change]);
    },
    attach(io) {
      server = io;
      return () => {
        if (server === io) server = undefined;
      };
    },
    async close() {
      server = undefined;
    },
  };
}
