/**
 * `bun run bench:send`: accepted sends per second through `POST /v3/connections/{id}/chats/messages`
 * to the sandbox driver (API → queue → driver → stored). The service runs as it does in
 * production, in processes of its own (this process only generates the load): `bun run start`
 * on the embedded database, or `bun run server` plus `bun run worker` on Postgres
 * (`BENCH_DATABASE_URL=postgres://…`, a fresh database of its own). Prints the accept rate and
 * latency, then how long until every message was SENT. `BENCH_ACCEPT_ONLY=1` (Postgres) pauses
 * the worker while requests are accepted, to measure the API alone.
 */
import { startServiceProcesses } from './service-processes.ts';
import { closedLoop, percentile } from './closed-loop.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 3000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const service = await startServiceProcesses({ PLAN_PRO_MESSAGES: '100000000' });
const { url, worker, api } = service;
const headers = { apikey: service.token, 'content-type': 'application/json' };
const connection = await api('POST', '/v3/connections', { name: 'bench' });
await api('POST', `/v3/connections/${connection.id}/connect`);
while ((await api('GET', `/v3/connections/${connection.id}`)).status !== 'CONNECTED') await Bun.sleep(100);

const send = (i: number) =>
  fetch(`${url}/v3/connections/${connection.id}/chats/messages`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ to: `+55119${String(10_000_000 + (i % 5000)).slice(-8)}`, text: `benchmark message ${i}` }),
  });

const warmUp = 100;
for (let i = 0; i < warmUp; i++) await (await send(i)).arrayBuffer();
await sentCount(warmUp);

if (process.env.BENCH_ACCEPT_ONLY) worker?.kill('SIGSTOP');
const cpuBefore = service.cpuSeconds();
const { latencies, failures, started, seconds: acceptSeconds } = await closedLoop(requests, concurrency, send, (response) => response.status !== 201);
if (process.env.BENCH_ACCEPT_ONLY) worker?.kill('SIGCONT');
await sentCount(warmUp + requests);
const sentSeconds = (performance.now() - started) / 1000;
const cpuAfter = service.cpuSeconds();

const pct = (p: number) => percentile(latencies, p);
console.log(`database: ${service.onPostgres ? 'postgres; server and worker processes' : 'pglite (embedded); one service process'}; ${requests} sends, concurrency ${concurrency}`);
console.log(`accepted: ${(requests / acceptSeconds).toFixed(0)} sends/s  p50 ${pct(50)} ms  p99 ${pct(99)} ms  failures ${failures}`);
console.log(`all SENT after ${sentSeconds.toFixed(2)} s: ${(requests / sentSeconds).toFixed(0)} sends/s end to end`);
// Where the two cores went, from the first request until every message was SENT.
const cpu = Object.keys(cpuAfter).map((part) => `${part} ${(((cpuAfter[part]! - (cpuBefore[part] ?? 0)) * 1000) / requests).toFixed(2)}`);
if (cpu.length > 0) console.log(`cpu ms per send: ${cpu.join(', ')}`);

await service.stop();

/** Waits until the network has taken `count` messages (each consumes its credit when SENT). */
async function sentCount(count: number) {
  while ((await api('GET', '/v3/summary')).messages.consumed < count) await Bun.sleep(50);
}
