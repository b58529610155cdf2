import { createHttpApp } from '../../adapters/http/app.ts';
import { errorResponse } from '../../adapters/http/errors.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../../core/shared/ports.ts';
import { openRuntime, type Runtime } from '../runtime.ts';
import type { Plugin } from '../../plugins/plugin.ts';
import { startBackgroundWork } from '../background.ts';
import { openRealtimeTransport } from '../../adapters/realtime/transport.ts';

export interface RunningService {
  url: string;
  runtime: Runtime;
  stop(): Promise<void>;
}

/**
 * Starts the HTTP server with the realtime websocket on the same port (`/ws`, spec 6.7) and,
 * when `worker` is set, the queue workers in the same process (the embedded default: `bun run start`).
 */
export async function startService(config: Config, options: { worker: boolean; plugins?: Plugin[]; clock?: Clock }): Promise<RunningService> {
  const runtime = await openRuntime(config, { available: options.plugins, clock: options.clock });
  const stopBackgroundWork = options.worker ? await startBackgroundWork(runtime) : async () => {};
  const realtime = openRealtimeTransport(runtime.ctx, runtime.plugins, { databaseUrl: config.databaseUrl });
  const detachRealtime = runtime.realtime.attach(realtime.io);
  const app = createHttpApp(runtime.ctx, runtime.plugins)
    .use(realtime.routes)
    .listen({
      port: config.port,
      hostname: '0.0.0.0',
      websocket: realtime.websocket,
      idleTimeout: realtime.idleTimeout,
      // Never Bun's HTML debug page (paths, source lines), whatever NODE_ENV says; what escapes Elysia is a JSON 500.
      development: false,
      error: (error: Error) => errorResponse('UNKNOWN', error),
      // Bun answers its own limit with an empty 413, so it is set out of reach: the service's
      // own limits (adapters/http/body.ts) refuse first, in JSON, and every body is read bounded.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    });
  const port = app.server!.port;
  if (!config.publicUrlSet) runtime.ctx.config.publicUrl = `http://localhost:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    runtime,
    async stop() {
      await stopBackgroundWork();
      detachRealtime();
      await realtime.close();
      await app.stop(true);
      await runtime.close();
    },
  };
}
