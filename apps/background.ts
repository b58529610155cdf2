import { superviseSessions } from '../adapters/connections/jobs.ts';
import { startSendEngine } from '../adapters/connections/send-engine.ts';
import { startDeliveryEngine } from '../adapters/webhooks/delivery-engine.ts';
import { startPluginEventRunner } from './plugin-events.ts';
import type { Runtime } from './runtime.ts';

/**
 * A worker's part, in a worker process or beside the server (`bun run start`): the job queues'
 * workers, the supervision of unofficial sessions, the send engine, the webhooks' delivery engine
 * and the plugins' event runner. Returns how to stop them, before the runtime closes.
 */
export async function startBackgroundWork(runtime: Runtime): Promise<() => Promise<void>> {
  await runtime.ctx.queue.work(runtime.jobs);
  const stopSupervision = await superviseSessions(runtime.ctx);
  const sends = startSendEngine(runtime.ctx, runtime.database);
  const deliveries = startDeliveryEngine(runtime.ctx);
  const pluginEvents = startPluginEventRunner(runtime.ctx, runtime.plugins, runtime.database);
  return async () => {
    stopSupervision();
    await Promise.all([sends.stop(), deliveries.stop(), pluginEvents.stop()]);
  };
}
