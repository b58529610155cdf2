/**
 * `bun run bench:api`: authenticated API throughput on a started service. Prints requests per
 * second and latency percentiles for `GET /v3/accounts` (API-key lookup, membership, listing)
 * and `POST /v3/api-tokens` (a write), on PGlite or on Postgres with BENCH_DATABASE_URL.
 */
import { loadConfig } from '../apps/config.ts';
import { startService } from '../apps/server/server.ts';
import { bootstrapOwner } from '../core/identity/bootstrap.ts';
import { baseStores } from '../adapters/postgres/stores.ts';
import { freshDatabase } from '../tests/support/service.ts';
import { closedLoop, percentile } from './closed-loop.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 2000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const databaseUrl = process.env.BENCH_DATABASE_URL;
// A database of its own, dropped afterwards, so the benchmark never writes into yours.
const database = databaseUrl ? await freshDatabase(databaseUrl) : undefined;

const service = await startService(loadConfig({ PORT: '0', DATA_DIR: 'memory://', DATABASE_URL: database?.url ?? '' }), { worker: false });
const owner = await service.runtime.ctx.db
  .transaction()
  .execute((trx) => bootstrapOwner(baseStores(trx), service.runtime.ctx, { email: 'bench@example.com', workspace: 'Bench', plan: 'PRO' }));

console.log(`database: ${databaseUrl ? 'postgres' : 'pglite (embedded)'}; ${requests} requests, concurrency ${concurrency}`);
await measure('GET /v3/accounts', () => fetch(`${service.url}/v3/accounts`, { headers: { apikey: owner.token } }));
await measure('POST /v3/api-tokens', () =>
  fetch(`${service.url}/v3/api-tokens`, {
    method: 'POST',
    headers: { apikey: owner.token, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  }),
);
await service.stop();
await database?.drop();

async function measure(name: string, call: () => Promise<Response>) {
  for (let i = 0; i < 50; i++) await (await call()).arrayBuffer(); // warm-up
  const { latencies, failures, seconds } = await closedLoop(requests, concurrency, call, (response) => response.status >= 400);
  const pct = (p: number) => percentile(latencies, p);
  console.log(
    `${name.padEnd(22)} ${(latencies.length / seconds).toFixed(0).padStart(6)} req/s  p50 ${pct(50)} ms  p99 ${pct(99)} ms  failures ${failures}`,
  );
}
