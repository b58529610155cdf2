import { createHttpApp } from '../../adapters/http/app.ts';
import type { Config } from '../config.ts';
import { openRuntime, type Runtime } from '../runtime.ts';
import type { Plugin } from '../../plugins/plugin.ts';
import { superviseSessions } from '../../adapters/connections/jobs.ts';

export interface RunningService {
  url: string;
  runtime: Runtime;
  stop(): Promise<void>;
}

/**
 * Starts the HTTP server and, when `worker` is set, the queue workers in the same process
 * (the embedded default: `bun run start`).
 */
export async function startService(config: Config, options: { worker: boolean; plugins?: Plugin[] }): Promise<RunningService> {
  const runtime = await openRuntime(config, { available: options.plugins });
  let stopSupervision = () => {};
  if (options.worker) {
    await runtime.ctx.queue.work(runtime.jobs);
    stopSupervision = await superviseSessions(runtime.ctx);
  }
  const app = createHttpApp(runtime.ctx, runtime.plugins).listen({ port: config.port, hostname: '0.0.0.0' });
  const port = app.server!.port;
  if (!config.publicUrlSet) runtime.ctx.config.publicUrl = `http://localhost:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    runtime,
    async stop() {
      stopSupervision();
      await app.stop(true);
      await runtime.close();
    },
  };
}
