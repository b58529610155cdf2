/**
 * `bun run bench:campaign`: a campaign of BENCH_RECIPIENTS (default 100,000) distinct numbers with
 * pacing off (`pace: { messagesPerMinute: null }`) on the sandbox driver (issue 8 Benchmark).
 *
 * The service runs as it does in production, in processes of its own (this process only calls
 * the API and watches): `bun run start` on the embedded database, or `bun run server` plus
 * `bun run worker` on Postgres (`BENCH_DATABASE_URL=postgres://…`, a fresh database of its own).
 * The workspace is on PRO with a monthly allowance above the audience (PLAN_PRO_MESSAGES).
 *
 * Prints the time to create the campaign (`POST /v3/campaigns`, 201: audience normalised, the
 * credits of every recipient reserved, recipients stored, all in one transaction); then, polling
 * `GET /v3/campaigns/{id}` once a second, the sends per second over time until COMPLETED; the
 * total time to complete, the sustained send rate (sent ÷ time from the first poll that saw a
 * send to the first that saw them all, and the median of the per-second rates in between); and
 * the resident memory (VmRSS) of the service processes sampled every second, min / max / last,
 * to show it stays flat. BENCH_POLL_SECONDS polls less often (each poll counts the whole audience).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { startServiceProcesses } from './service-processes.ts';

const recipients = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const timeoutSeconds = Number(process.env.BENCH_TIMEOUT_SECONDS ?? 3600);
// Reading a campaign counts its recipients by status (a join over the whole audience): polled
// less often, it weighs less on the two cores the service shares with Postgres.
const pollSeconds = Number(process.env.BENCH_POLL_SECONDS ?? 1);
// The create request carries every number (about 17 bytes each: 1.7 MB for 100,000), more than the
// default MAX_BODY_BYTES of 1 MiB; an operator sending audiences this large raises it the same way.
const service = await startServiceProcesses({
  PLAN_PRO_MESSAGES: String(Math.max(200_000, 2 * recipients)),
  MAX_BODY_BYTES: String(Math.max(1024 * 1024, recipients * 24 + 4096)),
});
const { api, worker } = service;

const connection = await api('POST', '/v3/connections', { name: 'bench' });
await api('POST', `/v3/connections/${connection.id}/connect`);
while ((await api('GET', `/v3/connections/${connection.id}`)).status !== 'CONNECTED') await Bun.sleep(100);

// ---------------------------------------------------------------------------------------------
// Memory: VmRSS of the service's processes (the server, and the worker on Postgres), every second.
// The server is the child of this process that is not the worker (the CLI bootstrap has exited).
// ---------------------------------------------------------------------------------------------

const childPids = readdirSync('/proc')
  .filter((entry) => /^\d+$/.test(entry))
  .filter((pid) => {
    try {
      // `pid (comm) state ppid …`; comm may hold spaces, so read after the last `)`.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
    } catch {
      return false;
    }
  })
  .map(Number);
const processes = [
  ...childPids.filter((pid) => pid !== worker?.pid).map((pid) => ({ name: 'server', pid })),
  ...(worker ? [{ name: 'worker', pid: worker.pid }] : []),
];
const rss = new Map(processes.map((p) => [p.name, [] as number[]]));
function rssMiB(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}
function sampleMemory() {
  for (const p of processes) {
    const value = rssMiB(p.pid);
    if (value !== undefined) rss.get(p.name)!.push(value);
  }
}
sampleMemory();
const memoryTimer = setInterval(sampleMemory, 1000);

// ---------------------------------------------------------------------------------------------
// Create, timed
// ---------------------------------------------------------------------------------------------

const numbers = Array.from({ length: recipients }, (_, i) => `+55119${String(10_000_000 + i).slice(-8)}`);
if (new Set(numbers).size !== recipients) throw new Error(`BENCH_RECIPIENTS at most 90,000,000 (distinct numbers)`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(
  `database: ${service.onPostgres ? 'postgres; server and worker processes' : 'pglite (embedded); one service process'}; ` +
    `${fmt(recipients)} recipients, pacing off, sandbox driver`,
);

const createStarted = performance.now();
const response = await fetch(`${service.url}/v3/campaigns`, {
  method: 'POST',
  headers: { apikey: service.token, 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'bench', connectionId: connection.id, message: { text: 'Hi {{name|there}}' }, audience: { numbers }, pace: { messagesPerMinute: null } }),
});
const created = (await response.json()) as any;
const createMs = performance.now() - createStarted;
if (response.status !== 201) throw new Error(`POST /v3/campaigns: ${response.status} ${JSON.stringify(created)}`);
console.log(
  `created in ${fmt(createMs)} ms (201; ${fmt(created.credits.reserved)} credits reserved, ${fmt(created.progress.queued)} queued, status ${created.status})`,
);

// ---------------------------------------------------------------------------------------------
// Watch until COMPLETED: one poll a second
// ---------------------------------------------------------------------------------------------

interface Sample {
  at: number;
  sent: number;
  sending: number;
  queued: number;
  failed: number;
  status: string;
}
const samples: Sample[] = [];
let campaign: any = created;
let pollMs = 0;
let polls = 0;
for (let tick = 1; ; tick++) {
  const due = createStarted + createMs + tick * pollSeconds * 1000;
  await Bun.sleep(Math.max(0, due - performance.now()));
  const t0 = performance.now();
  campaign = await api('GET', `/v3/campaigns/${created.id}`);
  const at = performance.now();
  pollMs += at - t0;
  polls += 1;
  const { sent, sending, queued, failed } = campaign.progress;
  const previous = samples.at(-1);
  samples.push({ at, sent, sending, queued, failed, status: campaign.status });
  const rate = previous ? (sent - previous.sent) / ((at - previous.at) / 1000) : sent / ((at - createStarted - createMs) / 1000);
  console.log(
    `  ${((at - createStarted) / 1000).toFixed(0).padStart(4)} s  ${campaign.status.padEnd(9)} sent ${fmt(sent).padStart(7)}  sending ${fmt(sending).padStart(6)}  queued ${fmt(queued).padStart(7)}` +
      `  failed ${fmt(failed)}  ${fmt(rate).padStart(5)} sends/s  rss ${processes.map((p) => `${p.name} ${fmt(rss.get(p.name)!.at(-1) ?? 0)} MiB`).join(', ')}`,
  );
  if (campaign.status !== 'RUNNING' && campaign.status !== 'SCHEDULED') break;
  if (at - createStarted > timeoutSeconds * 1000) {
    console.log(`gave up after ${timeoutSeconds} s`);
    break;
  }
}
clearInterval(memoryTimer);
sampleMemory();
const completeSeconds = (samples.at(-1)!.at - createStarted) / 1000;

// ---------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------

const { progress, credits } = campaign;
const firstSending = samples.findIndex((s) => s.sent > 0);
const allSent = samples.findIndex((s) => s.sent + s.failed >= created.progress.queued);
const rates: number[] = [];
for (let i = Math.max(1, firstSending + 1); i <= allSent; i++) rates.push((samples[i]!.sent - samples[i - 1]!.sent) / ((samples[i]!.at - samples[i - 1]!.at) / 1000));
// The pacer hands recipients to the messaging outbox 500 at a time; while it still has some
// queued, its runs compete with the sends for the same cores.
const pacerDone = samples.findIndex((s) => s.queued === 0);
const rateBetween = (from: number, to: number) => (from >= 0 && to > from ? (samples[to]!.sent - samples[from]!.sent) / ((samples[to]!.at - samples[from]!.at) / 1000) : NaN);
// The first and last intervals are partial (sending started or ended inside them): leave them out of the median when there are enough.
const steady = rates.length > 4 ? rates.slice(1, -1) : rates;
const median = [...steady].sort((a, b) => a - b)[Math.floor(steady.length / 2)] ?? NaN;
const sustained =
  firstSending >= 0 && allSent > firstSending
    ? (samples[allSent]!.sent - samples[firstSending]!.sent) / ((samples[allSent]!.at - samples[firstSending]!.at) / 1000)
    : NaN;

console.log(`create: ${fmt(createMs)} ms for ${fmt(recipients)} recipients (reservation included)`);
console.log(
  `completed: status ${campaign.status} ${completeSeconds.toFixed(1)} s after the create request; ` +
    `sent ${fmt(progress.sent)}, failed ${fmt(progress.failed)}, sending ${fmt(progress.sending)}, queued ${fmt(progress.queued)}; ` +
    `credits reserved ${fmt(credits.reserved)}, consumed ${fmt(credits.consumed)}, refunded ${fmt(credits.refunded)}, held ${fmt(credits.held)}`,
);
console.log(
  `sustained: ${fmt(sustained)} sends/s (first poll with a send to the first with all sent), median of per-second rates ${fmt(median)} sends/s, ` +
    `${fmt(progress.sent / completeSeconds)} sends/s end to end (create included)`,
);
console.log(
  `pacer: every recipient handed to the outbox ${pacerDone >= 0 ? ((samples[pacerDone]!.at - createStarted) / 1000).toFixed(0) : '?'} s after the create request; ` +
    `${fmt(rateBetween(firstSending, pacerDone))} sends/s while it was dispatching, ${fmt(rateBetween(pacerDone, allSent))} sends/s after`,
);
console.log(`polls: ${polls} (every ${pollSeconds} s), GET /v3/campaigns/{id} took ${fmt(pollMs / polls)} ms on average`);
for (const p of processes) {
  const values = rss.get(p.name)!;
  console.log(
    `memory (${p.name} VmRSS, ${values.length} samples): min ${fmt(Math.min(...values))} MiB, max ${fmt(Math.max(...values))} MiB, last ${fmt(values.at(-1)!)} MiB`,
  );
}

await service.stop();
const correct = campaign.status === 'COMPLETED' && progress.sent === created.progress.queued && credits.consumed === credits.reserved && credits.held === 0;
if (!correct) {
  console.log('NOT every recipient was sent exactly once (see the figures above)');
  process.exitCode = 1;
}
