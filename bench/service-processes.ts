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

  // BENCH_PROFILE_DIR=…: each service process writes its CPU profile there when it stops, as markdown and as a .cpuprofile.
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
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
        const seconds = pid === undefined ? undefined : processTimes(pid)?.own;
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
 * The Postgres server's CPU seconds so far: every live process's own time, plus the time of the
 * processes that have exited, which the postmaster holds once it has reaped them (a pool that
 * recycles its connections leaves no time uncounted). Only differences between two readings mean
 * something.
 */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const pid of postgresPids()) {
    const times = processTimes(pid);
    if (!times) continue;
    total += times.own;
    // The postmaster: the one process of the server whose parent is not one of its processes.
    if (!isPostgres(times.parent)) total += times.children;
  }
  return total;
}

/**
 * utime + stime of a process, and cutime + cstime (its reaped children's), in seconds, with its
 * parent's pid (Linux); undefined where /proc is not there.
 */
function processTimes(pid: number): { own: number; children: number; parent: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 4 (ppid) and 14 to 17 (utime, stime, cutime, cstime) of stat, in clock ticks (100 per second on Linux).
    return { parent: Number(fields[1]), own: (Number(fields[11]) + Number(fields[12])) / 100, children: (Number(fields[13]) + Number(fields[14])) / 100 };
  } catch {
    return undefined;
  }
}

function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres');
  } catch {
    return false;
  }
}

/** Every process of the Postgres server (its backends do the database's work). */
function postgresPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter(isPostgres);
  } catch {
    return [];
  }
}
