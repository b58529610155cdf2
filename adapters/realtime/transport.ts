import { errorField } from '../logging/logger.ts';
import { Server as Engine } from '@socket.io/bun-engine';
import { createAdapter } from '@socket.io/postgres-adapter';
import { Elysia } from 'elysia';
import { AdapterPool } from './adapter-pool.ts';
import { Server } from 'socket.io';
import type { AppContext } from '../http/context.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import { ACCESS_CHANGED, parseAccessChange, type AccessChange, type RealtimeServer } from './hub.ts';

/** Spec 6.7: "Socket.IO-compatible protocol; ... path `/ws`". Clients ask for `/ws/` (a trailing slash is their default). */
export const REALTIME_PATH = '/ws/';

/** Socket.IO on this server process: its server, how HTTP reaches it, and its stop. */
export interface RealtimeTransport {
  io: RealtimeServer;
  /** Mounted on the HTTP app: handshakes, long-polling and websocket upgrades under `/ws/`. */
  routes: Elysia<any, any, any, any, any, any, any>;
  /** Bun's websocket handlers for the upgraded connections (passed to `listen`). */
  websocket: ReturnType<Engine['handler']>['websocket'];
  /** Seconds a quiet connection may stay open: over the ping interval, so long-polls survive it. */
  idleTimeout: number;
  close(): Promise<void>;
}

/**
 * Socket.IO served by Bun's own HTTP server through `@socket.io/bun-engine`: the Elysia app
 * routes `/ws/` to the engine (the engine's documented Elysia mount), and the websocket handlers
 * of `Bun.serve` are the engine's. Each enabled plugin adds its namespaces (`realtime` hook).
 *
 * With several server processes (Postgres), `@socket.io/postgres-adapter` carries broadcasts
 * between them over LISTEN/NOTIFY on a pool of its own (one connection stays on LISTEN). It is
 * held at 0.3: later versions route by a field `@socket.io/postgres-emitter` (0.1, the latest)
 * does not send, so they drop every packet a worker emits. On the embedded database there is
 * one process, and Socket.IO's in-memory adapter is enough.
 */
export function openRealtimeTransport(ctx: AppContext, plugins: Plugin[], options: { databaseUrl?: string }): RealtimeTransport {
  const pool = options.databaseUrl ? new AdapterPool({ connectionString: options.databaseUrl, max: 4 }) : undefined;
  pool?.on('error', (error) => ctx.log.error({ error: errorField(error) }, 'realtime adapter idle connection failed'));
  const io = new Server({
    serveClient: false,
    ...(pool && {
      adapter: createAdapter(pool, { errorHandler: (error) => pool.isClosing || ctx.log.error({ error: errorField(error) }, 'realtime adapter failed') }),
    }),
  });
  const engine = new Engine({ path: REALTIME_PATH });
  io.bind(engine);

  // Access changes arrive as server-side emits on the main namespace (hub.ts), from this
  // process's hub or, on Postgres, from any process's through the adapter.
  const accessListeners: Array<(change: AccessChange) => void> = [];
  io.sockets.on(ACCESS_CHANGED, (payload: unknown) => {
    const change = parseAccessChange(payload);
    if (!change) return;
    for (const listener of accessListeners) {
      try {
        listener(change);
      } catch (error) {
        ctx.log.error({ error: errorField(error) }, 'realtime access change failed');
      }
    }
  });
  const signals = { onAccessChanged: (listener: (change: AccessChange) => void) => void accessListeners.push(listener) };

  const teardowns: Array<() => void | Promise<void>> = [];
  for (const plugin of plugins) {
    const teardown = plugin.realtime?.(io, ctx, signals);
    if (teardown) teardowns.push(teardown);
  }

  const handler = engine.handler();
  // `parse: 'none'`: the engine reads long-poll bodies itself. Hidden: not an API operation.
  const routes = new Elysia({ name: 'realtime' }).all(REALTIME_PATH, ({ request, server }) => engine.handleRequest(request, server!), {
    parse: 'none',
    detail: { hide: true },
  });

  return {
    io,
    routes,
    websocket: handler.websocket,
    idleTimeout: handler.idleTimeout,
    async close() {
      for (const teardown of teardowns) await teardown();
      // Disconnects every socket and closes the adapters (which releases the LISTEN connection);
      // the pool then stops handing out clients, so a LISTEN client still on its way is let go.
      pool?.closing();
      await io.close();
      await pool?.end();
    },
  };
}
