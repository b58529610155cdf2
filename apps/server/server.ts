import { createHttpApp } from '../../adapters/http/app.ts';
import { errorResponse } from '../../adapters/http/errors.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../../core/shared/ports.ts';
import { openRuntime, type Runtime } from '../runtime.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import { startBackgroundWork } from '../background.ts';
import { openRealtimeTransport } from '../../adapters/realtime/transport.ts';
import { runAdminCommand } from '../admin-commands.ts';
import { openControlSocket, type ControlSocket } from '../control-socket.ts';
import { realtimeGauges } from '../../adapters/realtime/gauges.ts';
import { openMetricsListener } from '../metrics-listener.ts';
import { errorField } from '../../adapters/logging/logger.ts';
import { announceShutdown } from '../../adapters/realtime/shutdown-notice.ts';
import { closeHttpServer } from './http-close.ts';

export interface RunningService {
  /** Where this machine reaches the server (loopback when bound to every interface). */
  url: string;
  /** The address and port actually bound, e.g. `0.0.0.0:3000`. */
  bound: string;
  runtime: Runtime;
  /** The port of the `METRICS_PORT` listener, when there is one. */
  metricsPort?: number;
  /**
   * Drains, then stops: `/readyz` answers 503 at once while everything still serves for
   * `drainSeconds` (DRAIN_SECONDS), so a load balancer takes the process out before it closes.
   */
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
  let app;
  try {
    app = createHttpApp(runtime.ctx, runtime.plugins)
      .use(realtime.routes)
      .listen({
        port: config.port,
        hostname: config.host,
        // Elysia's default `reusePort` lets a second process share the port and split the requests.
        reusePort: false,
        websocket: realtime.websocket,
        idleTimeout: realtime.idleTimeout,
        // Never Bun's HTML debug page (paths, source lines), whatever NODE_ENV says; what escapes Elysia is a JSON 500.
        development: false,
        error: (error: Error) => errorResponse('UNKNOWN', error, runtime.ctx.log),
        // Bun answers its own limit with an empty 413, so it is set out of reach: the service's
        // own limits (adapters/http/body.ts) refuse first, in JSON, and every body is read bounded.
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      });
  } catch (error) {
    await stopBackgroundWork();
    detachRealtime();
    await realtime.close();
    await runtime.close();
    throw listenError(error, config);
  }
  const server = app.server!;
  runtime.ctx.peerAddress = (request) => server.requestIP(request)?.address;
  const port = server.port;
  const host = server.hostname ?? config.host;
  if (!config.publicUrlSet) runtime.ctx.config.publicUrl = `http://localhost:${port}`;
  const control = controlSocket(config, runtime);
  const removeGauges = realtimeGauges(realtime.io).map((gauge) => runtime.ctx.metrics!.addGauge(gauge));
  const closeAll = async () => {
    await control?.close();
    // Sockets are told to reconnect elsewhere; then no new connection is taken, requests in
    // flight finish (bounded) while the worker's part stops, and only then the database closes.
    await announceShutdown(realtime.io);
    const closingHttp = closeHttpServer(server, async () => {
      detachRealtime();
      await realtime.close();
    }, runtime.ctx.log);
    await Promise.all([closingHttp, stopBackgroundWork()]);
    await runtime.close();
  };
  let metricsListener;
  try {
    metricsListener = openMetricsListener(config, runtime);
  } catch (error) {
    await closeAll();
    throw error;
  }
  runtime.ctx.readiness.serving();
  return {
    url: `http://${reachableHost(host)}:${port}`,
    bound: `${host.includes(':') ? `[${host}]` : host}:${port}`,
    runtime,
    metricsPort: metricsListener?.port,
    async stop() {
      runtime.ctx.readiness.draining();
      if (config.drainSeconds > 0) await Bun.sleep(config.drainSeconds * 1000);
      await metricsListener?.stop();
      for (const remove of removeGauges) remove();
      await closeAll();
    },
  };
}

/**
 * On the embedded database this process is the only one that may open DATA_DIR, so it runs the
 * CLI's commands for it over a control socket there (apps/control-socket.ts). Without one the
 * CLI says the database is in use, as before: a socket that cannot be made is a warning only.
 */
function controlSocket(config: Config, runtime: Runtime): ControlSocket | undefined {
  if (config.databaseUrl || config.dataDir.startsWith('memory://')) return undefined;
  try {
    return openControlSocket(config.dataDir, (request) => runAdminCommand(runtime, request));
  } catch (error) {
    runtime.ctx.log.warn({ dataDir: config.dataDir, error: errorField(error) }, 'no control socket: stop the service to use the CLI');
    return undefined;
  }
}

/** Why the server could not listen, in words an operator acts on. */
function listenError(error: unknown, config: Config): Error {
  const code = (error as { code?: string }).code;
  if (code === 'EADDRINUSE') return new Error(`port ${config.port} is in use (on ${config.host}); stop the other process or set PORT`);
  if (code === 'EADDRNOTAVAIL' || code === 'EINVAL') return new Error(`cannot listen on HOST ${config.host}: not an address of this machine`);
  return error instanceof Error ? error : new Error(String(error));
}

/** A wildcard address is reached through loopback. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
