import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase } from './database.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from './round-robin-proxy.ts';
import { ROOT, spawnServiceProcess } from './server-process.ts';

/**
 * The production layout on one machine: `servers` HTTP server processes (`apps/server/main.ts
 * --no-worker`) behind a round-robin TCP proxy, and `workers` worker processes
 * (`apps/worker/main.ts`), all on one fresh Postgres database, bootstrapped with the CLI.
 * PUBLIC_URL is the proxy's address, the same for every process, as a deployment sets it.
 */
export interface Cluster {
  proxy: RoundRobinProxy;
  /** The proxy's URL: where clients go. */
  url: string;
  servers: ClusterProcess[];
  workers: ClusterProcess[];
  owner: { token: string; workspaceId: string; userId: string };
  databaseUrl: string;
  /** SIGKILL: no graceful stop, whatever it held is simply gone. */
  kill(process: ClusterProcess): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterProcess {
  pid: number;
  /** The server's own port (undefined for a worker). */
  port?: number;
  alive: boolean;
  log(): string;
  process: ReturnType<typeof Bun.spawn>;
}

export async function startCluster(adminUrl: string, options: { servers: number; workers: number; env?: Record<string, string> }): Promise<Cluster> {
  const database = await freshDatabase(adminUrl);
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-cluster-'));
  const proxy = await startRoundRobinProxy();
  const env = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    PORT: '0',
    DATABASE_URL: database.url,
    PUBLIC_URL: proxy.url,
    OUTBOUND_ALLOW: '127.0.0.0/8',
    // Four processes on one Postgres (max_connections 100 on the test machine): small pools.
    DATABASE_POOL_SIZE: '4',
    ...options.env,
  };
  const all: ClusterProcess[] = [];
  const stop = async () => {
    for (const child of all) child.process.kill('SIGKILL');
    await Promise.all(all.map((child) => child.process.exited));
    proxy.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await database.drop();
  };
  try {
    const bootstrap = Bun.spawnSync([process.execPath, 'apps/cli/main.ts', 'bootstrap', '--email', 'cluster@example.com', '--workspace', 'Cluster', '--plan', 'PRO'], { cwd: ROOT, env });
    if (bootstrap.exitCode !== 0) throw new Error(`bootstrap failed: ${bootstrap.stderr.toString()}`);
    const owner = JSON.parse(bootstrap.stdout.toString()) as Cluster['owner'];

    const spawn = async (args: string[], ready: RegExp): Promise<ClusterProcess> => {
      const started = await spawnServiceProcess(args, env, ready);
      const child: ClusterProcess = { pid: started.process.pid, alive: true, log: started.log, process: started.process };
      const url = started.match[1];
      if (url) child.port = Number(new URL(url).port);
      all.push(child);
      return child;
    };
    // The first applies the migrations; the others, started together once it is up, find them done.
    const server = () => spawn(['apps/server/main.ts', '--no-worker'], /listening on (http:\/\/[^\s"]+)/);
    const worker = () => spawn(['apps/worker/main.ts'], /Switchboard worker running/);
    const firstServer = await server();
    const [servers, workers] = await Promise.all([
      Promise.all(Array.from({ length: options.servers - 1 }, server)).then((rest) => [firstServer, ...rest]),
      Promise.all(Array.from({ length: options.workers }, worker)),
    ]);
    proxy.setBackends(servers.map((s) => s.port!));

    return {
      proxy,
      url: proxy.url,
      servers,
      workers,
      owner,
      databaseUrl: database.url,
      async kill(child) {
        child.process.kill('SIGKILL');
        await child.process.exited;
        child.alive = false;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
