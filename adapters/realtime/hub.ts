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
