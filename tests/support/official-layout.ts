import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freshDatabase } from './database.ts';
import { startGraphSimulator, type GraphSimulator, type GraphSimulatorOptions } from './graph-simulator.ts';
import { cloudApiCredentials } from './official-connection.ts';
import { ROOT, spawnServiceProcess } from './server-process.ts';

export type ServiceChild = Awaited<ReturnType<typeof spawnServiceProcess>>;
export type ApiCall = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** Calls to a running server's API with an API token, answers parsed. */
export function apiOf(url: string, token: string): ApiCall {
  return async (method, path, body) => {
    const response = await fetch(`${url}${path}`, { method, headers: { apikey: token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };
}

/** The simulator's number as a `cloud-api` connection (not yet connected): its id. */
export async function createOfficialConnection(api: ApiCall, sim: GraphSimulator): Promise<string> {
  const created = await api('POST', '/v3/connections', { name: 'official', driver: 'cloud-api', credentials: cloudApiCredentials(sim) });
  if (created.status !== 201) throw new Error(`creating the official connection answered ${created.status}: ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}

/**
 * The production layout on Postgres against the Graph simulator, for tests that start the
 * service's own processes and stop or kill them: a fresh database, a data directory, the
 * environment the processes start with, and a client on the database for the test's own reads.
 * `close()` SIGKILLs every process it started and removes the rest.
 */
export interface OfficialLayout {
  sim: GraphSimulator;
  env: Record<string, string>;
  db: pg.Client;
  /** A service process on this layout; resolves once its output matches `ready`. */
  spawn(args: string[], ready: RegExp): Promise<ServiceChild>;
  spawnServer(): Promise<ServiceChild>;
  spawnWorker(): Promise<ServiceChild>;
  /** The first Owner, by the CLI, as an operator makes them: their API token. */
  bootstrap(email: string, workspace: string): string;
  close(): Promise<void>;
}

export async function openOfficialLayout(name: string, simulator: GraphSimulatorOptions, extraEnv: Record<string, string> = {}): Promise<OfficialLayout> {
  const sim = await startGraphSimulator(simulator);
  const database = await freshDatabase(process.env.TEST_DATABASE_URL!);
  const dataDir = mkdtempSync(join(tmpdir(), `switchboard-${name}-`));
  const env = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    PORT: '0',
    DATABASE_URL: database.url,
    OUTBOUND_ALLOW: '127.0.0.0/8',
    CLOUD_API_BASE_URL: sim.baseUrl,
    ...extraEnv,
  };
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const children: ServiceChild[] = [];

  const spawn = async (args: string[], ready: RegExp) => {
    const child = await spawnServiceProcess(args, env, ready);
    children.push(child);
    return child;
  };
  return {
    sim,
    env,
    db,
    spawn,
    spawnServer: () => spawn(['apps/server/main.ts', '--no-worker'], /listening on (http:\/\/\S+)/),
    spawnWorker: () => spawn(['apps/worker/main.ts'], /Switchboard worker running/),
    bootstrap(email, workspace) {
      const bootstrap = Bun.spawnSync([process.execPath, 'apps/cli/main.ts', 'bootstrap', '--email', email, '--workspace', workspace, '--plan', 'PRO'], { cwd: ROOT, env });
      if (bootstrap.exitCode !== 0) throw new Error(`bootstrap failed: ${bootstrap.stderr.toString()}`);
      return (JSON.parse(bootstrap.stdout.toString()) as { token: string }).token;
    },
    async close() {
      for (const child of children) child.process.kill('SIGKILL');
      await sim.stop();
      await db.end();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
