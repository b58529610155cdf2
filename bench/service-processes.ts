import { mkdtempSync, rmSync } from 'node:fs';
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
  onPostgres: boolean;
  /** The separate worker process (Postgres only): pause it to measure the API alone. */
  worker: ReturnType<typeof Bun.spawn> | undefined;
  api(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

export async function startServiceProcesses(extraEnv: Record<string, string> = {}): Promise<ServiceProcesses> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const database = databaseUrl ? await freshDatabase(databaseUrl) : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-'));
  const root = join(import.meta.dir, '..');
  const env = { ...process.env, PORT: '0', DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', ...extraEnv };

  const bootstrap = Bun.spawnSync([process.execPath, 'apps/cli/main.ts', 'bootstrap', '--email', 'bench@example.com', '--workspace', 'Bench', '--plan', 'PRO'], { cwd: root, env });
  if (bootstrap.exitCode !== 0) throw new Error(bootstrap.stderr.toString());
  const { token } = JSON.parse(bootstrap.stdout.toString()) as { token: string };

  const server = Bun.spawn([process.execPath, 'apps/server/main.ts', ...(database ? ['--no-worker'] : [])], { cwd: root, env, stdout: 'pipe', stderr: 'inherit' });
  const url = await listeningUrl(server.stdout);
  const worker = database ? Bun.spawn([process.execPath, 'apps/worker/main.ts'], { cwd: root, env, stdout: 'ignore', stderr: 'inherit' }) : undefined;
  const headers = { apikey: token, 'content-type': 'application/json' };

  return {
    url,
    token,
    onPostgres: Boolean(database),
    worker,
    async api(method, path, body) {
      const response = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const parsed = (await response.json()) as any;
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
      return parsed;
    },
    async stop() {
      for (const child of [worker, server]) {
        child?.kill('SIGCONT');
        child?.kill('SIGTERM');
        await child?.exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
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
  reader.releaseLock();
  return seen.match(/listening on (http:\/\/\S+)/)![1]!;
}
