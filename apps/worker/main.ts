import { loadConfigOrExit } from '../config.ts';
import { openRuntime } from '../runtime.ts';
import { startBackgroundWork } from '../background.ts';
import { openMetricsListener } from '../metrics-listener.ts';
import { stopOnSignal } from '../stop-on-signal.ts';

/** The worker alone, for production on Postgres: run as many as you like. */
const config = loadConfigOrExit();
if (!config.databaseUrl) {
  console.error('A separate worker needs DATABASE_URL; on the embedded database `bun run start` runs the worker itself.');
  process.exit(1);
}
const runtime = await openRuntime(config).catch((error: Error) => {
  console.error(`Switchboard could not start: ${error.message}`);
  process.exit(1);
});
const stopBackgroundWork = await startBackgroundWork(runtime);
// A worker has no HTTP port: its counters (sends, webhook attempts) are scraped here.
let metrics;
try {
  metrics = openMetricsListener(config, runtime);
} catch (error) {
  console.error(`Switchboard worker could not start: ${(error as Error).message}`);
  await stopBackgroundWork();
  await runtime.close();
  process.exit(1);
}
runtime.ctx.log.info(
  { jobKinds: runtime.jobs.length, ...(metrics && { metricsPort: metrics.port }) },
  `Switchboard worker running ${runtime.jobs.length} job kind(s)${metrics ? `; metrics on ${config.host}:${metrics.port}/metrics` : ''}`,
);
stopOnSignal(runtime.ctx.log, async () => {
  await metrics?.stop();
  await stopBackgroundWork();
  await runtime.close();
});
