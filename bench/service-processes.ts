import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase } from '../tests/support/database.ts';

/**
 * The service as the benchmarks run it: in processes of its own, as in production, so the
 * benchmark process only generates load. Bootstrapped with the CLI; `bun run start` on a fresh
 * embedded database, or `bun run server` plus `bun run worker` on a fresh Postgres database when
 * `BENCH_DATABASE_URL` is set. `stop()` ends the processes and removes the data.
 */
export interface ServiceProcesses {
  url: string;
  token: string;
  /** The bootstrapped workspace, whose Owner the token is. */
  workspaceId: string;
  onPostgres: boolean;
  /** The service's own database on Postgres (a benchmark may fill it directly); undefined on PGlite. */
  databaseUrl: string | undefined;
  /** The separate worker process (Postgres only): pause it to measure the API alone. */
  worker: ReturnType<typeof Bun.spawn> | undefined;
  api(method: string, path: string, body?: unknown): Promise<any>;
  /** CPU seconds used so far by each part (Linux /proc; empty elsewhere): where a run's time went. */
  cpuSeconds(): Record<string, number>;
  /** `keepDatabase`: the Postgres database stays (for EXPLAIN ANALYZE by hand). */
  stop(options?: { keepDatabase?: boolean }): Promise<void>;
}

export async function startServiceProcesses(extraEnv: Record<string, string> = {}): Promise<ServiceProcesses> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const database = databaseUrl ? await freshDatabase(databaseUrl) : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-'));
  const root = join(import.meta.dir, '..');
  // Bench receivers listen on this machine.
  const env = { ...process.env, PORT: '0', DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', OUTBOUND_ALLOW: '127.0.0.0/8', ...extraEnv };

  const bootstrap = Bun.spawnSync([process.execPath, 'apps/cli/main.ts', 'bootstrap', '--email', 'bench@example.com', '--workspace', 'Bench', '--plan', 'PRO'], { cwd: root, env });
  if (bootstrap.exitCode !== 0) throw new Error(bootstrap.stderr.toString());
  const { token, workspaceId } = JSON.parse(bootstrap.stdout.toString()) as { token: string; workspaceId: string };

  // BENCH_PROFILE_DIR=…: each service process writes a CPU profile (markdown) there when it stops.
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof-md', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const server = Bun.spawn([process.execPath, ...profile, 'apps/server/main.ts', ...(database ? ['--no-worker'] : [])], { cwd: root, env, stdout: 'pipe', stderr: 'inherit' });
  const url = await listeningUrl(server.stdout);
  const worker = database ? Bun.spawn([process.execPath, ...profile, 'apps/worker/main.ts'], { cwd: root, env, stdout: 'ignore', stderr: 'inherit' }) : undefined;
  // A benchmark that throws must not leave the service running behind it.
  process.on('exit', () => {
    server.kill();
    worker?.kill();
  });
  const headers = { apikey: token, 'content-type': 'application/json' };

  return {
    url,
    token,
    workspaceId,
    onPostgres: Boolean(database),
    databaseUrl: database?.url,
    worker,
    async api(method, path, body) {
      const response = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const parsed = (await response.json()) as any;
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
      return parsed;
    },
    cpuSeconds() {
      const parts: Record<string, number> = {};
      const add = (name: string, pid: number | undefined) => {
        const seconds = pid === undefined ? undefined : processCpuSeconds(pid);
        if (seconds !== undefined) parts[name] = (parts[name] ?? 0) + seconds;
      };
      add(database ? 'server' : 'service', server.pid);
      add('worker', worker?.pid);
      add('load generator', process.pid);
      if (database) parts.postgres = postgresCpuSeconds();
      return parts;
    },
    async stop({ keepDatabase = false } = {}) {
      for (const child of [worker, server]) {
        child?.kill('SIGCONT');
        child?.kill('SIGTERM');
        await child?.exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
      if (!keepDatabase) await database?.drop();
    },
  };
}

async function listeningUrl(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let seen = '';
  while (!/listening on (http:\/\/\S+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server stopped before listening: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  // Read on: its log (an access line per request) must never fill the pipe and stall the server.
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return seen.match(/listening on (http:\/\/\S+)/)![1]!;
}

/**
 * The Postgres server's CPU seconds so far, summed from each of its processes' own time since it
 * was first seen: a backend that exits takes its time with it, and must not make the sum go back
 * (the CPU it used between the last reading and its exit is missed: the service's pools keep their
 * connections, so that is little).
 */
const postgresSeen = new Map<number, number>();
let postgresTotal = 0;
function postgresCpuSeconds(): number {
  for (const pid of postgresPids()) {
    const seconds = processCpuSeconds(pid);
    if (seconds === undefined) continue;
    postgresTotal += seconds - (postgresSeen.get(pid) ?? 0);
    postgresSeen.set(pid, seconds);
  }
  return postgresTotal;
}

/** utime + stime of a process, in seconds (Linux); undefined where /proc is not there. */
function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Every process of the Postgres server (its backends do the database's work). */
function postgresPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres');
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}
