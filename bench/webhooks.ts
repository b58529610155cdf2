/**
 * `bun run bench:webhooks`: signed webhook deliveries to a local receiver, and the latency from
 * an injected incoming message to its arrival at the receiver (issue 4 Benchmark).
 *
 * The service runs in processes of its own, as in production (this process only injects load and
 * receives the webhooks): `bun run start` on the embedded database, or `bun run server` plus
 * `bun run worker` on Postgres (`BENCH_DATABASE_URL=postgres://…`, a fresh database of its own).
 * A sandbox connection gets a webhook `{events: ['messages.upsert'], hmacEnabled: true}` (no
 * batching) pointing at a receiver in this process (Bun.serve on a free port) that answers 200
 * and checks every signature with clients/verify-webhook.ts.
 *
 *   (a) throughput: BENCH_MESSAGES incoming messages injected through
 *       `POST /v3/connections/{id}/sandbox/messages` at concurrency BENCH_CONCURRENCY; signed
 *       deliveries per second at the receiver from the first arrival to the last. On Postgres
 *       also with the worker paused while the messages are injected, so the receiver measures
 *       the delivery engine alone draining the backlog.
 *   (b) latency: BENCH_LATENCY_MESSAGES messages injected one at a time (BENCH_LATENCY_GAP_MS
 *       apart); injection to arrival at the receiver, p50 and p99.
 *
 * Every throughput figure is also stated as a ratio to the raw insert rate of the same database
 * (bench/raw-insert.ts), measured once, after the warm-up and before (a), while the
 * service idles. `BENCH_RUNS=3` repeats (a) and (a') and prints the median of the runs as well;
 * (b) runs once. Before all, a warm-up that is not counted: 50 messages one at a time, then
 * BENCH_WARMUP (2,000) at the runs' concurrency.
 */
import { verifySwitchboardWebhook } from '../clients/verify-webhook.ts';
import { startServiceProcesses } from './service-processes.ts';
import { median, percentile } from './closed-loop.ts';
import { measureRawInsertRate } from './raw-insert.ts';

const messages = Number(process.env.BENCH_MESSAGES ?? 3000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const latencyMessages = Number(process.env.BENCH_LATENCY_MESSAGES ?? 300);
const latencyGapMs = Number(process.env.BENCH_LATENCY_GAP_MS ?? 20);
const runs = Number(process.env.BENCH_RUNS ?? 1);

// ---------------------------------------------------------------------------------------------
// The receiver: counts requests, answers 200, notes when each message arrived, checks signatures.
// ---------------------------------------------------------------------------------------------

let secret = '';
const arrivals = new Map<string, number>();
const receiver = { requests: 0, unsigned: 0, badSignatures: 0, duplicates: 0 };
/** The markers being waited for, and who waits (O(1) per arrival: the receiver must stay cheap). */
let awaited = new Set<string>();
let allArrived: (() => void) | undefined;
const server = Bun.serve({
  port: 0,
  async fetch(request) {
    const raw = await request.text();
    const at = performance.now();
    receiver.requests += 1;
    if (!request.headers.get('x-switchboard-signature-256')) receiver.unsigned += 1;
    else if (!verifySwitchboardWebhook(secret, raw, request.headers)) receiver.badSignatures += 1;
    for (const [marker] of raw.matchAll(/bench:[a-z]+:\d+/g)) {
      if (arrivals.has(marker)) receiver.duplicates += 1;
      else arrivals.set(marker, at);
      awaited.delete(marker);
    }
    if (awaited.size === 0) allArrived?.();
    return new Response('ok');
  },
});
const receiverUrl = `http://127.0.0.1:${server.port}/webhook`;

// ---------------------------------------------------------------------------------------------
// The service, in its own processes
// ---------------------------------------------------------------------------------------------

const service = await startServiceProcesses();
const { url, worker, api } = service;
const database = service.onPostgres;
const headers = { apikey: service.token, 'content-type': 'application/json' };

const connection = await api('POST', '/v3/connections', { name: 'bench' });
await api('POST', `/v3/connections/${connection.id}/connect`);
while ((await api('GET', `/v3/connections/${connection.id}`)).status !== 'CONNECTED') await Bun.sleep(100);
const webhook = await api('POST', '/v3/webhooks', { url: receiverUrl, events: ['messages.upsert'], connections: [connection.id], hmacEnabled: true });
secret = (await api('GET', `/v3/webhooks/${webhook.id}/secret`)).secret;

/** A contact writes; resolves when the service has stored the message (201). */
async function inject(marker: string, contact: number): Promise<void> {
  const response = await fetch(`${url}/v3/connections/${connection.id}/sandbox/messages`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ from: `+55119${String(10_000_000 + (contact % 5000)).slice(-8)}`, text: `${marker} hello from the benchmark` }),
  });
  await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`injecting ${marker}: ${response.status}`);
}

/** Waits until every marker has arrived (or the timeout passes); returns those still missing. */
async function arrived(markers: string[], timeoutMs = 180_000): Promise<string[]> {
  awaited = new Set(markers.filter((m) => !arrivals.has(m)));
  if (awaited.size > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        allArrived = undefined;
        resolve();
      }
      allArrived = done;
    });
  }
  awaited = new Set();
  return markers.filter((m) => !arrivals.has(m));
}

/** Injects `count` messages at concurrency BENCH_CONCURRENCY; the markers of run `run` are its own. */
async function injectAll(phase: string, count: number, run = 0): Promise<{ markers: string[]; started: number; injectedSeconds: number }> {
  const markers = Array.from({ length: count }, (_, i) => `bench:${phase}:${run * count + i}`);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        await inject(markers[i]!, i);
      }
    }),
  );
  return { markers, started, injectedSeconds: (performance.now() - started) / 1000 };
}

function rate(markers: string[]): { perSecond: number; spanSeconds: number; last: number } {
  const times = markers.map((m) => arrivals.get(m)!).filter((t) => t !== undefined);
  const first = Math.min(...times);
  const last = Math.max(...times);
  const spanSeconds = (last - first) / 1000;
  return { perSecond: (times.length - 1) / spanSeconds, spanSeconds, last };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const missingTotal: string[] = [];

// Warm-up, not counted: connections, compiled queries, the queue's workers; messages one at a
// time, then BENCH_WARMUP at the runs' concurrency, so that the first run too finds the
// processes' code compiled for the batches it writes, as the runs after it do.
const warm = Array.from({ length: 50 }, (_, i) => `bench:warm:${i}`);
for (const [i, marker] of warm.entries()) await inject(marker, i);
missingTotal.push(...(await arrived(warm, 60_000)));
const underLoad = Number(process.env.BENCH_WARMUP ?? 2000);
if (underLoad > 0) missingTotal.push(...(await arrived((await injectAll('warmup', underLoad)).markers)));

console.log(`database: ${database ? 'postgres; server and worker processes' : 'pglite (embedded); one service process'}; receiver in the benchmark process`);
const rawInsert = await measureRawInsertRate(service, 'after the warm-up, before the load');
console.log(rawInsert.summary);
/** `438/s (0.039 × raw insert)`. */
const perSecond = (figure: number) => `${fmt(figure)}/s ${rawInsert.ratio(figure)}`;

const injected: number[] = [];
const live: number[] = [];
const backlog: number[] = [];
/**
 * CPU seconds of each part: during the live runs (injection to the last arrival), and during the
 * backlog runs while the paused worker's messages are stored, then while the worker drains them.
 */
const liveCpu: Record<string, number> = {};
const storingCpu: Record<string, number> = {};
const drainingCpu: Record<string, number> = {};
function addCpu(into: Record<string, number>, before: Record<string, number>, after: Record<string, number>): void {
  for (const part of Object.keys(after)) into[part] = (into[part] ?? 0) + after[part]! - (before[part] ?? 0);
}
for (let run = 0; run < runs; run++) {
  const label = runs > 1 ? `run ${run + 1}: ` : '';

  // (a) Throughput, live: injection and delivery at the same time. The injection rate is the
  // rate at which inbound messages are stored (the sandbox answers 201 once stored).
  {
    const cpuBefore = service.cpuSeconds();
    const { markers, started, injectedSeconds } = await injectAll('live', messages, run);
    const missing = await arrived(markers);
    addCpu(liveCpu, cpuBefore, service.cpuSeconds());
    missingTotal.push(...missing);
    const { perSecond: delivered, last } = rate(markers);
    injected.push(messages / injectedSeconds);
    live.push(delivered);
    console.log(
      `${label}throughput (live): ${messages} messages injected and stored at ${perSecond(injected[run]!)} (concurrency ${concurrency}); ` +
        `signed deliveries at the receiver ${perSecond(delivered)} (first to last arrival); all delivered ${((last - started) / 1000).toFixed(2)} s after the first injection` +
        (missing.length ? `; ${missing.length} MISSING` : ''),
    );
  }

  // (a') Throughput of the delivery engine alone (Postgres): the worker is paused while the
  // messages are injected, then drains the backlog (fan-out and delivery).
  if (worker) {
    worker.kill('SIGSTOP');
    const cpuBefore = service.cpuSeconds();
    const { markers, injectedSeconds } = await injectAll('backlog', messages, run);
    const cpuStored = service.cpuSeconds();
    worker.kill('SIGCONT');
    const missing = await arrived(markers);
    const cpuAfter = service.cpuSeconds();
    addCpu(storingCpu, cpuBefore, cpuStored);
    addCpu(drainingCpu, cpuStored, cpuAfter);
    missingTotal.push(...missing);
    const { perSecond: delivered, spanSeconds } = rate(markers);
    backlog.push(delivered);
    console.log(
      `${label}throughput (backlog of ${messages}, worker paused while injecting): stored at ${perSecond(messages / injectedSeconds)}; signed deliveries ${perSecond(delivered)} over ${spanSeconds.toFixed(2)} s` +
        (missing.length ? `; ${missing.length} MISSING` : ''),
    );
  }
}
if (runs > 1) {
  console.log(
    `median of ${runs} runs: injected and stored ${perSecond(median(injected))}; delivered live ${perSecond(median(live))}` +
      (backlog.length ? `; delivered from the backlog ${perSecond(median(backlog))}` : ''),
  );
}

// Where the cores went per message (Postgres: every Postgres process on the machine).
const perMessage = (cpu: Record<string, number>, parts: string[]) =>
  parts.filter((part) => cpu[part] !== undefined).map((part) => `${part} ${((cpu[part]! * 1000) / (messages * runs)).toFixed(2)}`).join(', ');
if (Object.keys(liveCpu).length > 0) {
  console.log(
    `cpu ms per message: live ${perMessage(liveCpu, ['server', 'worker', 'service', 'postgres', 'load generator'])}` +
      (worker ? `; storing (worker paused) ${perMessage(storingCpu, ['server', 'postgres'])}; draining the backlog ${perMessage(drainingCpu, ['worker', 'postgres'])}` : ''),
  );
}

// (b) Latency: one message at a time, injection to arrival.
{
  const latencies: number[] = [];
  const markers: string[] = [];
  for (let i = 0; i < latencyMessages; i++) {
    const marker = `bench:latency:${i}`;
    markers.push(marker);
    const t0 = performance.now();
    await inject(marker, i);
    const missing = await arrived([marker], 30_000);
    if (missing.length) missingTotal.push(...missing);
    else latencies.push(arrivals.get(marker)! - t0);
    await Bun.sleep(latencyGapMs);
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => percentile(latencies, p, 1);
  console.log(`latency (${latencyMessages} messages one at a time, ${latencyGapMs} ms apart; injection to receiver): p50 ${pct(50)} ms  p99 ${pct(99)} ms  max ${latencies.at(-1)!.toFixed(1)} ms`);
}

console.log(
  `receiver: ${receiver.requests} requests, ${receiver.badSignatures} failed signature checks, ${receiver.unsigned} unsigned, ` +
    `${receiver.duplicates} duplicates, ${missingTotal.length} messages never delivered`,
);

await service.stop();
server.stop(true);
if (receiver.badSignatures > 0 || receiver.unsigned > 0 || missingTotal.length > 0) process.exitCode = 1;
