/**
 * `bun run bench:cluster`: what each kind of process of the production layout uses under a
 * steady load. Needs Postgres (`BENCH_DATABASE_URL=postgres://…`; a fresh database of its own).
 * Starts two `bun run server` processes behind a round-robin TCP proxy and two `bun run worker`
 * processes (tests/support/cluster.ts), then, for BENCH_SECONDS (default 60) after a 10 s
 * warm-up, holds an open-loop load through the proxy: BENCH_SENDS_PER_SECOND sends (default 20)
 * on a sandbox connection bound to a helpdesk inbox, BENCH_INBOUND_PER_SECOND incoming messages
 * (default 5: each one a helpdesk message and conversation events), a webhook receiving every
 * send and incoming message (signed), and BENCH_SOCKETS helpdesk websockets (default 20) hearing
 * the inbox. Prints, per process kind, CPU (cores, averaged over the window) and memory (RSS idle
 * after start, RSS and peak at the end), and for Postgres the CPU and PSS of this database's
 * backends (not the WAL writer or checkpointer, shared with other databases).
 */
import { loadavg, totalmem } from 'node:os';
import pg from 'pg';
import { startCluster } from '../tests/support/cluster.ts';
import { connectHelpdesk, type TestSocket } from '../tests/support/socket.ts';
import { startReceiver } from '../tests/support/webhook-receiver.ts';
import { processUsage, type ProcessUsage } from './process-usage.ts';

const adminUrl = process.env.BENCH_DATABASE_URL;
if (!adminUrl) throw new Error('bench:cluster needs Postgres: set BENCH_DATABASE_URL=postgres://…');
const seconds = Number(process.env.BENCH_SECONDS ?? 60);
const sendsPerSecond = Number(process.env.BENCH_SENDS_PER_SECOND ?? 20);
const inboundPerSecond = Number(process.env.BENCH_INBOUND_PER_SECOND ?? 5);
const socketCount = Number(process.env.BENCH_SOCKETS ?? 20);

// The production default pool size (the cluster test runs its processes with smaller pools).
const cluster = await startCluster(adminUrl, { servers: 2, workers: 2, env: { PLAN_PRO_MESSAGES: '100000000', DATABASE_POOL_SIZE: '10' } });
const receiver = startReceiver();
const sockets: TestSocket[] = [];
const admin = new pg.Client({ connectionString: cluster.databaseUrl });
try {
  await admin.connect();
  const headers = { apikey: cluster.owner.token, 'content-type': 'application/json', connection: 'close' };
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${cluster.url}${path}`, { method, headers, keepalive: false, body: body === undefined ? undefined : JSON.stringify(body) });
    const parsed = (await response.json()) as any;
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const connection = await api('POST', '/v3/connections', { name: 'bench' });
  await api('POST', `/v3/connections/${connection.id}/connect`);
  while ((await api('GET', `/v3/connections/${connection.id}`)).status !== 'CONNECTED') await Bun.sleep(100);
  await api('POST', '/v3/helpdesk/inboxes', { name: 'Bench', channelType: 'CONNECTION', connectionId: connection.id });
  await api('POST', '/v3/webhooks', { url: receiver.url('/events'), events: ['send.message', 'messages.upsert'], connections: [connection.id], hmacEnabled: true });
  for (let i = 0; i < socketCount; i += 1) sockets.push(await connectHelpdesk(cluster.url, cluster.owner.token, { transports: ['websocket'] }));

  const parts = [
    ...cluster.servers.map((s) => ({ kind: 'server', pid: s.pid })),
    ...cluster.workers.map((w) => ({ kind: 'worker', pid: w.pid })),
    { kind: 'load generator and proxy', pid: process.pid },
  ];
  const backendPids = async () =>
    (await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')).rows.map((r) => r.pid);
  const idle = new Map(parts.map((p) => [p.pid, processUsage(p.pid)!]));

  let failures = 0;
  let sent = 0;
  let inbound = 0;
  const fire = (path: string, body: unknown) =>
    api('POST', path, body).catch(() => {
      failures += 1;
    });
  /** An open loop: requests leave on the clock (as many as are due), whatever the answers take. */
  const run = (durationMs: number) =>
    new Promise<void>((resolve) => {
      const start = performance.now();
      const [sentAtStart, inboundAtStart] = [sent, inbound];
      const timer = setInterval(() => {
        const elapsed = Math.min(performance.now() - start, durationMs);
        while (sent - sentAtStart < Math.floor((elapsed * sendsPerSecond) / 1000)) {
          sent += 1;
          void fire(`/v3/connections/${connection.id}/chats/messages`, { to: `+55119${String(10_000_000 + (sent % 5000)).slice(-8)}`, text: `bench ${sent}` });
        }
        while (inbound - inboundAtStart < Math.floor((elapsed * inboundPerSecond) / 1000)) {
          inbound += 1;
          void fire(`/v3/connections/${connection.id}/sandbox/messages`, { from: `55119${String(20_000_000 + (inbound % 200)).slice(-8)}`, text: `incoming ${inbound}` });
        }
        if (elapsed >= durationMs) {
          clearInterval(timer);
          resolve();
        }
      }, 50);
    });

  await run(10_000);
  const before = new Map(parts.map((p) => [p.pid, processUsage(p.pid)!]));
  const pgBefore = new Map<number, ProcessUsage>();
  for (const pid of await backendPids()) pgBefore.set(pid, processUsage(pid)!);
  const loadBefore = loadavg()[0]!.toFixed(2);
  const startedAt = performance.now();
  const eventsBefore = receiver.hits('/events').length;
  const [sentBefore, inboundBefore] = [sent, inbound];
  const socketEventsBefore = sockets.reduce((n, s) => n + s.received.length, 0);
  await run(seconds * 1000);
  const elapsed = (performance.now() - startedAt) / 1000;
  const after = new Map(parts.map((p) => [p.pid, processUsage(p.pid)!]));
  const pgPids = await backendPids();
  // Whether the layout kept up: sends still queued when the window closed.
  const backlog = (await admin.query<{ n: number }>('select count(*)::int as n from messages where send_state is not null')).rows[0]!.n;
  const pgAfter = new Map(pgPids.map((pid) => [pid, processUsage(pid)]));

  const machine = `${navigator.hardwareConcurrency} cores, ${Math.round(totalmem() / 2 ** 30)} GB`;
  console.log(`machine: ${machine}; load average at the start of the window: ${loadBefore}`);
  console.log(
    `load for ${Math.round(elapsed)} s through the proxy: ${((sent - sentBefore) / elapsed).toFixed(1)} sends/s, ${((inbound - inboundBefore) / elapsed).toFixed(1)} incoming/s, ${socketCount} websockets; ` +
      `${receiver.hits('/events').length - eventsBefore} webhook requests, ${sockets.reduce((n, s) => n + s.received.length, 0) - socketEventsBefore} socket events received; ${failures} failed requests; ${backlog} sends still queued at the end`,
  );
  console.log('\n| Process | CPU (cores, mean) | RSS idle | RSS end | RSS peak |');
  console.log('|---|---|---|---|---|');
  for (const part of parts) {
    const cpu = (after.get(part.pid)!.cpuSeconds - before.get(part.pid)!.cpuSeconds) / elapsed;
    const mb = (n: number) => `${Math.round(n)} MB`;
    console.log(`| ${part.kind} (pid ${part.pid}) | ${cpu.toFixed(2)} | ${mb(idle.get(part.pid)!.rssMb)} | ${mb(after.get(part.pid)!.rssMb)} | ${mb(after.get(part.pid)!.peakRssMb)} |`);
  }
  let pgCpu = 0;
  let pgPss = 0;
  for (const [pid, usage] of pgAfter) {
    if (!usage) continue;
    pgCpu += usage.cpuSeconds - (pgBefore.get(pid)?.cpuSeconds ?? 0);
    pgPss += usage.pssMb;
  }
  console.log(`| postgres: this database's ${pgPids.length} backends | ${(pgCpu / elapsed).toFixed(2)} | | ${Math.round(pgPss)} MB (PSS, sum) | |`);
} finally {
  for (const socket of sockets) socket.close();
  receiver.stop();
  await admin.end();
  await cluster.stop();
}
