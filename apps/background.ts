import { superviseSessions } from '../adapters/connections/jobs.ts';
import { startSendEngine } from '../adapters/connections/send-engine.ts';
import { startDeliveryEngine } from '../adapters/webhooks/delivery-engine.ts';
import { startPluginEventRunner } from './plugin-events.ts';
import type { Runtime } from './runtime.ts';

/**
 * A worker's part, in a worker process or beside the server (`bun run start`): the job queues'
 * workers, the supervision of unofficial sessions, the send engine, the webhooks' delivery engine
 * and the plugins' event runner. Adds the `worker` check to readiness (its loops run). Returns how
 * to stop them, before the runtime closes.
 */
export async function startBackgroundWork(runtime: Runtime): Promise<() => Promise<void>> {
  const { ctx } = runtime;
  await ctx.queue.work(runtime.jobs);
  const stopSupervision = await superviseSessions(ctx);
  const sends = startSendEngine(ctx, runtime.database);
  const deliveries = startDeliveryEngine(ctx);
  const pluginEvents = startPluginEventRunner(ctx, runtime.plugins, runtime.database);
  ctx.readiness.check('worker', () => {
    const stopped = [
      !ctx.queue.working && 'job queue',
      !sends.running() && 'send engine',
      !deliveries.running() && 'webhook delivery engine',
      !pluginEvents.running() && 'plugin event runner',
    ].filter(Boolean);
    return stopped.length > 0 ? `not running: ${stopped.join(', ')}` : undefined;
  });
  return async () => {
    stopSupervision();
    await Promise.all([sends.stop(), deliveries.stop(), pluginEvents.stop()]);
  };
}
