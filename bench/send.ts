/**
 * `bun run bench:send`: accepted sends per second through `POST /v3/connections/{id}/chats/messages`
 * to the sandbox driver (API → queue → driver → stored). Prints the accept rate and latency of
 * the API, then how long the worker took until every message was SENT. Embedded PGlite by
 * default; `BENCH_DATABASE_URL=postgres://…` runs on a fresh Postgres database.
 */
import { loadConfig } from '../apps/config.ts';
import { startService } from '../apps/server/server.ts';
import { bootstrapOwner } from '../core/identity/bootstrap.ts';
import { baseStores } from '../adapters/postgres/stores.ts';
import { freshDatabase } from '../tests/support/service.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 3000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const databaseUrl = process.env.BENCH_DATABASE_URL;
const database = databaseUrl ? await freshDatabase(databaseUrl) : undefined;

const env = { PORT: '0', DATA_DIR: 'memory://', DATABASE_URL: database?.url ?? '', PLAN_PRO_MESSAGES: '100000000' };
// On Postgres the worker runs in its own process, as in production (`bun run server` + `bun run worker`);
// the embedded database is one process's alone, so there server and worker share it.
const service = await startService(loadConfig(env), { worker: !database });
const worker = database
  ? Bun.spawn([process.execPath, ...(process.env.BENCH_WORKER_PROFILE ? ['--cpu-prof-md', '--cpu-prof-dir=' + process.env.BENCH_WORKER_PROFILE] : []), 'apps/worker/main.ts'], { cwd: `${import.meta.dir}/..`, env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'inherit' })
  : undefined;
const owner = await service.runtime.ctx.db
  .transaction()
  .execute((trx) => bootstrapOwner(baseStores(trx), service.runtime.ctx, { email: 'bench@example.com', workspace: 'Bench', plan: 'PRO' }));
const headers = { apikey: owner.token, 'content-type': 'application/json' };
const connection = (await (await fetch(`${service.url}/v3/connections`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })).json()) as { id: string };
await fetch(`${service.url}/v3/connections/${connection.id}/connect`, { method: 'POST', headers });
while (((await (await fetch(`${service.url}/v3/connections/${connection.id}`, { headers })).json()) as { status: string }).status !== 'CONNECTED') await Bun.sleep(100);

const send = (i: number) =>
  fetch(`${service.url}/v3/connections/${connection.id}/chats/messages`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ to: `+55119${String(10_000_000 + (i % 5000)).slice(-8)}`, text: `benchmark message ${i}` }),
  });

for (let i = 0; i < 100; i++) await (await send(i)).arrayBuffer(); // warm-up
await drained();

// BENCH_ACCEPT_ONLY=1 pauses the worker while requests are accepted, to measure the API alone.
if (process.env.BENCH_ACCEPT_ONLY) worker?.kill('SIGSTOP');
const latencies: number[] = [];
let next = 0;
let failures = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < requests) {
      const i = next++;
      const t0 = performance.now();
      const response = await send(i);
      await response.arrayBuffer();
      if (response.status !== 201) failures += 1;
      latencies.push(performance.now() - t0);
    }
  }),
);
const acceptSeconds = (performance.now() - started) / 1000;
if (process.env.BENCH_ACCEPT_ONLY) worker?.kill('SIGCONT');
await drained();
const sentSeconds = (performance.now() - started) / 1000;

latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(2);
console.log(`database: ${databaseUrl ? 'postgres, server and worker processes' : 'pglite (embedded), one process'}; ${requests} sends, concurrency ${concurrency}`);
console.log(`accepted: ${(requests / acceptSeconds).toFixed(0)} sends/s  p50 ${pct(50)} ms  p99 ${pct(99)} ms  failures ${failures}`);
console.log(`all SENT by the worker after ${sentSeconds.toFixed(2)} s: ${(requests / sentSeconds).toFixed(0)} sends/s end to end`);
worker?.kill('SIGTERM');
await worker?.exited;
await service.stop();
await database?.drop();

/** Waits until the worker has handed every accepted message to the driver. */
async function drained() {
  for (;;) {
    const row = await service.runtime.ctx.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('status', '=', 'PENDING')
      .executeTakeFirstOrThrow();
    if (Number(row.n) === 0) return;
    await Bun.sleep(50);
  }
}
