import { loadConfigOrExit } from '../config.ts';
import { startService } from './server.ts';
import { firstRunUrl } from '../../core/identity/first-run.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';

/** `bun run start`: server and worker in one process. `--no-worker` serves HTTP only. */
const config = loadConfigOrExit();
const worker = !process.argv.includes('--no-worker');
const service = await startService(config, { worker }).catch((error: Error) => {
  console.error(`Switchboard could not start: ${error.message}`);
  process.exit(1);
});
const where = config.databaseUrl ? 'Postgres' : `the embedded database in ${config.dataDir}`;
console.log(`Switchboard listening on ${service.url} (bound to ${service.bound}; public URL ${config.publicUrl}) on ${where}${worker ? ', with the worker' : ''}`);
console.log(`Plugins: ${service.runtime.plugins.map((p) => p.name).join(', ') || 'none'}`);
if (service.metricsPort !== undefined) console.log(`Metrics on ${config.host}:${service.metricsPort}/metrics`);
// First run: while nobody exists, the one-time link that makes the first Owner (pages/first-run.ts).
if (!(await baseStores(service.runtime.ctx.db).identity.anyUser())) {
  const { ctx } = service.runtime;
  console.log(`Nobody uses this Switchboard yet. Open this link to create its first Owner and workspace:\n  ${firstRunUrl(ctx.config.publicUrl, ctx.keys.signing)}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    await service.stop();
    process.exit(0);
  });
}
