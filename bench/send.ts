/**
 * `bun run bench:send`: accepted sends per second through `POST /v3/connections/{id}/chats/messages`
 * to the sandbox driver (API → queue → driver → stored). The service runs as it does in
 * production, in processes of its own (this process only generates the load): `bun run start`
 * on the embedded database, or `bun run server` plus `bun run worker` on Postgres
 * (`BENCH_DATABASE_URL=postgres://…`, a fresh database of its own). Prints the accept rate and
 * latency, then how long until every message was SENT. `BENCH_ACCEPT_ONLY=1` (Postgres) pauses
 * the worker while requests are accepted, to measure the API alone.
 *
 * Every throughput figure is also stated as a ratio to the raw insert rate of the same database
 * (bench/raw-insert.ts), measured right before each run, while the service idles: on a machine
 * whose speed drifts from minute to minute, each run is compared with the database as it was
 * then. `BENCH_RUNS=3` repeats the raw insert and the load (BENCH_REQUESTS sends each time) and
 * prints the median of the runs' rates and of their ratios as well. Before the first run, a
 * warm-up that is not counted: 100 sends one at a time, then BENCH_WARMUP (2,000) at the runs'
 * concurrency.
 *
 * Each run also says where its slowest 1 % of requests started (in how many 200 ms windows):
 * clustered, the p99 is stalls of the machine or of a process's collector, not slow requests.
 * `BENCH_LATENCY_TIMELINE=path` writes each request's start and latency to `path.runN.json`.
 */
import { startServiceProcesses } from './service-processes.ts';
import { closedLoop, median, percentile, slowestCallWindows } from './closed-loop.ts';
import { measureRawInsertRate, ratioText } from './raw-insert.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 3000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const runs = Number(process.env.BENCH_RUNS ?? 1);
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

// Warm-up, not counted: sends one at a time, then BENCH_WARMUP at the runs' concurrency, so that
// the first run too finds the processes' code compiled for the batches it writes and the pool's
// connections open, as the runs after it do.
const oneByOne = 100;
const underLoad = Number(process.env.BENCH_WARMUP ?? 2000);
for (let i = 0; i < oneByOne; i++) await (await send(i)).arrayBuffer();
if (underLoad > 0) await closedLoop(underLoad, concurrency, (i) => send(oneByOne + i), (response) => response.status !== 201);
const warmUp = oneByOne + underLoad;
await sentCount(warmUp);

console.log(`database: ${service.onPostgres ? 'postgres; server and worker processes' : 'pglite (embedded); one service process'}; ${requests} sends, concurrency ${concurrency}; warm-up ${warmUp} sends`);

const accepted: number[] = [];
const endToEnd: number[] = [];
const acceptedRatios: number[] = [];
const endToEndRatios: number[] = [];
const cpuSpent: Record<string, number> = {};
for (let run = 0; run < runs; run++) {
  const label = runs > 1 ? `run ${run + 1}: ` : '';
  const rawInsert = await measureRawInsertRate(service, run === 0 ? 'after the warm-up, before the load' : `before run ${run + 1}, after the last message of run ${run} was SENT`);
  console.log(`${label}${rawInsert.summary}`);
  const cpuBefore = service.cpuSeconds();
  if (process.env.BENCH_ACCEPT_ONLY) worker?.kill('SIGSTOP');
  const { latencies, timeline, failures, started, seconds: acceptSeconds } = await closedLoop(requests, concurrency, send, (response) => response.status !== 201);
  if (process.env.BENCH_ACCEPT_ONLY) worker?.kill('SIGCONT');
  await sentCount(warmUp + (run + 1) * requests);
  const sentSeconds = (performance.now() - started) / 1000;
  // Where the two cores went, from the first request until every message was SENT (the raw inserts not counted).
  const cpuAfter = service.cpuSeconds();
  for (const part of Object.keys(cpuAfter)) cpuSpent[part] = (cpuSpent[part] ?? 0) + cpuAfter[part]! - (cpuBefore[part] ?? 0);
  accepted.push(requests / acceptSeconds);
  endToEnd.push(requests / sentSeconds);
  acceptedRatios.push(accepted[run]! / rawInsert.perSecond);
  endToEndRatios.push(endToEnd[run]! / rawInsert.perSecond);

  const pct = (p: number) => percentile(latencies, p);
  const perSecond = (rate: number) => `${rate.toFixed(0)} sends/s ${rawInsert.ratio(rate)}`;
  console.log(`${label}accepted: ${perSecond(accepted[run]!)}  p50 ${pct(50)} ms  p99 ${pct(99)} ms  failures ${failures}`);
  const tail = slowestCallWindows(timeline);
  console.log(`${label}the slowest 1 % (${tail.slowest} requests) started in ${tail.windows} of the run's ${tail.of} windows of 200 ms`);
  if (process.env.BENCH_LATENCY_TIMELINE) await Bun.write(`${process.env.BENCH_LATENCY_TIMELINE}.run${run + 1}.json`, JSON.stringify(timeline));
  console.log(`${label}all SENT after ${sentSeconds.toFixed(2)} s: ${perSecond(endToEnd[run]!)} end to end`);
}
if (runs > 1) {
  const median_ = (rates: number[], ratios: number[]) => `${median(rates).toFixed(0)} sends/s (${ratioText(median(ratios))} × raw insert, the median of the runs' ratios)`;
  console.log(`median of ${runs} runs: accepted ${median_(accepted, acceptedRatios)}; end to end ${median_(endToEnd, endToEndRatios)}`);
}
const cpu = Object.keys(cpuSpent).map((part) => `${part} ${((cpuSpent[part]! * 1000) / (requests * runs)).toFixed(2)}`);
if (cpu.length > 0) console.log(`cpu ms per send: ${cpu.join(', ')}`);

await service.stop();

/** Waits until the network has taken `count` messages (each consumes its credit when SENT). */
async function sentCount(count: number) {
  while ((await api('GET', '/v3/summary')).messages.consumed < count) await Bun.sleep(50);
}
