import { loadConfigOrExit } from '../config.ts';
import { startService } from './server.ts';

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

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    await service.stop();
    process.exit(0);
  });
}
