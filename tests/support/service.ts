import { afterAll, beforeAll } from 'bun:test';
import { loadConfig } from '../../apps/config.ts';
import { startService, type RunningService } from '../../apps/server/server.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import type { PlanName } from '../../core/plans/plans.ts';
import type { Clock } from '../../core/shared/ports.ts';
import { freshDatabase } from './database.ts';

export { freshDatabase };

/**
 * A real Switchboard for a test file: HTTP on a free port, worker in process, on the
 * embedded PGlite (in memory) or, when TEST_DATABASE_URL is set, on a fresh Postgres
 * database of its own that is dropped afterwards.
 */
export interface TestService extends RunningService {
  bootstrap(input?: BootstrapInput): Promise<Owner>;
  call(method: string, path: string, options?: { apikey?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
}

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/**
 * Hooks do not take bunfig's test timeout (they default to 5 s); starting a service (database,
 * migrations, pg-boss) can take several seconds on a busy machine or on Postgres.
 */
export const HOOK_TIMEOUT = 60_000;

export interface TestServiceOptions {
  env?: Record<string, string>;
  plugins?: Plugin[];
  clock?: Clock;
  database?: SharedDatabase;
}

/** An Owner signed up with their first workspace, and an API token acting as them there. */
export type Owner = { userId: string; workspaceId: string; token: string };
export type BootstrapInput = { email?: string; workspace?: string; plan?: PlanName };

/**
 * The service of a test file, the one way a file boots Switchboard: started before its first
 * test (fresh database, migrations, app and worker; `startTestService`), stopped after its last.
 * Answers it at once, to be used from the hooks and tests that run after the start; `options`
 * may be a function when they depend on something an earlier hook started (a simulator's URL).
 * Register it before the file's own hooks that use it: bun runs hooks in the order registered.
 */
export function useTestService(options: TestServiceOptions | (() => TestServiceOptions) = {}): TestService {
  let started: TestService | undefined;
  const running = (): TestService => {
    if (!started) throw new Error('the test service is used before its beforeAll hook ran (or after it stopped)');
    return started;
  };
  beforeAll(async () => {
    started = await startTestService(typeof options === 'function' ? options() : options);
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    const service = started;
    started = undefined;
    await service?.stop();
  }, HOOK_TIMEOUT);
  return {
    get url() {
      return running().url;
    },
    get bound() {
      return running().bound;
    },
    get runtime() {
      return running().runtime;
    },
    get metricsPort() {
      return running().metricsPort;
    },
    stop: () => running().stop(),
    bootstrap: (input) => running().bootstrap(input),
    call: (method, path, callOptions) => running().call(method, path, callOptions),
  };
}

/**
 * An Owner signed up on the service before the file's tests (a hook registered after the
 * service's). Answers the object at once; its fields are filled in when the hook has run.
 */
export function useOwner(service: TestService, input: BootstrapInput = {}): Owner {
  const owner = {} as Owner;
  beforeAll(async () => {
    Object.assign(owner, await service.bootstrap(input));
  }, HOOK_TIMEOUT);
  return owner;
}

/**
 * A database that outlives one service, for tests that restart the service on it (with other
 * configuration): a data directory for PGlite, or a fresh Postgres database. `drop()` removes it.
 */
export interface SharedDatabase {
  url?: string;
  dataDir: string;
  drop(): Promise<void>;
}

export async function sharedDatabase(): Promise<SharedDatabase> {
  if (onPostgres) {
    const fresh = await freshDatabase(process.env.TEST_DATABASE_URL!);
    return { url: fresh.url, dataDir: 'memory://', drop: fresh.drop };
  }
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-shared-'));
  return { dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  // A shared database is the caller's to drop; otherwise each service has a fresh one of its own.
  const database = options.database ? undefined : onPostgres ? await freshDatabase(process.env.TEST_DATABASE_URL!) : undefined;
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: options.database?.dataDir ?? 'memory://',
    ...(options.database?.url && { DATABASE_URL: options.database.url }),
    // Test receivers listen on this machine; a test of the outbound policy sets its own.
    OUTBOUND_ALLOW: '127.0.0.0/8',
    // The tests' own output stays readable: no access lines unless LOG_LEVEL asks for them.
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    ...(database && { DATABASE_URL: database.url }),
    ...options.env,
  });
  const service = await startService(config, { worker: true, plugins: options.plugins, clock: options.clock });
  let counter = 0;
  return {
    ...service,
    async stop() {
      await service.stop();
      await database?.drop();
    },
    async bootstrap(input = {}) {
      counter += 1;
      return service.runtime.ctx.db.transaction().execute((trx) =>
        bootstrapOwner(baseStores(trx), service.runtime.ctx, {
          email: input.email ?? `owner${counter}-${crypto.randomUUID().slice(0, 8)}@example.com`,
          workspace: input.workspace ?? `Workspace ${counter}`,
          plan: input.plan ?? 'FREE',
        }),
      );
    },
    async call(method, path, { apikey, body, headers = {} } = {}) {
      const response = await fetch(`${service.url}${path}`, {
        method,
        headers: {
          ...(apikey && { apikey }),
          ...(body !== undefined && typeof body !== 'string' && { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {}
      return { status: response.status, body: parsed, headers: response.headers };
    },
  };
}
