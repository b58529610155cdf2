import { loadConfigOrExit } from '../config.ts';
import { openRuntime } from '../runtime.ts';
import { startBackgroundWork } from '../background.ts';

/** The worker alone, for production on Postgres: run as many as you like. */
const config = loadConfigOrExit();
if (!config.databaseUrl) {
  console.error('A separate worker needs DATABASE_URL; on the embedded database `bun run start` runs the worker itself.');
  process.exit(1);
}
const runtime = await openRuntime(config);
const stopBackgroundWork = await startBackgroundWork(runtime);
console.log(`Switchboard worker running ${runtime.jobs.length} job kind(s)`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    await stopBackgroundWork();
    await runtime.close();
    process.exit(0);
  });
}
