import { loadConfig } from '../config.ts';
import { openRuntime } from '../runtime.ts';
import { superviseSessions } from '../../adapters/connections/jobs.ts';
import { startDeliveryEngine } from '../../adapters/webhooks/delivery-engine.ts';

/** The worker alone, for production on Postgres: run as many as you like. */
const config = loadConfig();
if (!config.databaseUrl) {
  console.error('A separate worker needs DATABASE_URL; on the embedded database `bun run start` runs the worker itself.');
  process.exit(1);
}
const runtime = await openRuntime(config);
await runtime.ctx.queue.work(runtime.jobs);
const stopSupervision = await superviseSessions(runtime.ctx);
const deliveries = startDeliveryEngine(runtime.ctx);
console.log(`Switchboard worker running ${runtime.jobs.length} job kind(s)`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    stopSupervision();
    await deliveries.stop();
    await runtime.close();
    process.exit(0);
  });
}
