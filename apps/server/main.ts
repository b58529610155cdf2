import { loadConfigOrExit } from '../config.ts';
import { startService } from './server.ts';
import { firstRunUrl } from '../../core/identity/first-run.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { STOP_BOUND_MS, stopOnSignal } from '../stop-on-signal.ts';

/** `bun run start`: server and worker in one process. `--no-worker` serves HTTP only. */
const config = loadConfigOrExit();
const worker = !process.argv.includes('--no-worker');
const service = await startService(config, { worker }).catch((error: Error) => {
  // One plain line, before any log line: what an operator reads when the start is refused.
  console.error(`Switchboard could not start: ${error.message}`);
  process.exit(1);
});
const { ctx } = service.runtime;
// Before anything else is awaited: a SIGTERM from now on drains and stops in order, within a bound.
stopOnSignal(ctx.log, () => service.stop(), { drainSeconds: config.drainSeconds }, config.drainSeconds * 1000 + STOP_BOUND_MS);

const where = config.databaseUrl ? 'Postgres' : `the embedded database in ${config.dataDir}`;
ctx.log.info(
  { url: service.url, bound: service.bound, publicUrl: ctx.config.publicUrl, database: config.databaseUrl ? 'postgres' : 'embedded', worker },
  `Switchboard listening on ${service.url} (bound to ${service.bound}; public URL ${config.publicUrl}) on ${where}${worker ? ', with the worker' : ''}`,
);
const plugins = service.runtime.plugins.map((p) => p.name);
ctx.log.info({ plugins }, `Plugins: ${plugins.join(', ') || 'none'}`);
if (service.metricsPort !== undefined) ctx.log.info({ metricsPort: service.metricsPort }, `Metrics on ${config.host}:${service.metricsPort}/metrics`);
// First run: while nobody exists, the one-time link that makes the first Owner (pages/first-run.ts).
// A warning: nobody can use the service until it is opened, and LOG_LEVEL=warn still shows it.
if (!(await baseStores(ctx.db).identity.anyUser())) {
  ctx.log.warn(`Nobody uses this Switchboard yet. Open this link to create its first Owner and workspace: ${firstRunUrl(ctx.config.publicUrl, ctx.keys.signing)}`);
}
