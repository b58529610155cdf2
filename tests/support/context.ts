import { createLogger, isLogLevel, type LogLevel } from '../../adapters/logging/logger.ts';
import { databaseCheck, Readiness } from '../../adapters/http/readiness.ts';
import { databaseStorage } from '../../adapters/postgres/storage.ts';
import { BASE_ROUTE_SCOPES, routeScopeTable } from '../../adapters/http/route-scopes.ts';
import type { AppContext } from '../../adapters/http/context.ts';
import { messagingJobs } from '../../adapters/connections/jobs.ts';
import { secretBox } from '../../adapters/crypto/secret-box.ts';
import { createSandboxDriver } from '../../adapters/drivers/sandbox/index.ts';
import { createOutbound } from '../../adapters/outbound/outbound.ts';
import { parseAllowList } from '../../core/shared/outbound-policy.ts';
import { JobQueue } from '../../adapters/queue/queue.ts';
import { secureRandom, systemClock, uuidV7 } from '../../adapters/system.ts';
import { webhookJobs } from '../../adapters/webhooks/jobs.ts';
import { DEFAULT_PLANS } from '../../core/plans/plans.ts';
import type { Clock } from '../../core/shared/ports.ts';
import { openTestDatabase, type TestDatabase } from './database.ts';

/**
 * The app context on a fresh test database, for tests that drive use cases on real stores and a
 * real queue in an order of their own: every queue exists (so the outbox can enqueue) but no
 * worker takes jobs; the test does what a job would, when it chooses.
 */
export interface TestContext {
  ctx: AppContext;
  database: TestDatabase;
  close(): Promise<void>;
}

export async function openTestContext(options: { clock?: Clock } = {}): Promise<TestContext> {
  const database = await openTestDatabase();
  const queue = await JobQueue.start(database);
  const key = crypto.getRandomValues(new Uint8Array(32));
  const ctx: AppContext = {
    db: database.db,
    storage: databaseStorage(database.db, () => ctx),
    queue,
    clock: options.clock ?? systemClock,
    ids: uuidV7,
    random: secureRandom,
    // Tests' own output stays readable: warnings and errors only, unless LOG_LEVEL says otherwise.
    log: createLogger({ level: isLogLevel(process.env.LOG_LEVEL ?? '') ? (process.env.LOG_LEVEL as LogLevel) : 'warn' }),
    readiness: new Readiness().check('database', databaseCheck(database)),
    plans: DEFAULT_PLANS,
    config: { publicUrl: 'http://localhost' },
    routeScopes: routeScopeTable(BASE_ROUTE_SCOPES),
    keys: { signing: key, sealing: key },
    box: secretBox(key),
    drivers: new Map([['sandbox', createSandboxDriver()]]),
    // Receivers of these tests listen on this machine.
    outbound: createOutbound(parseAllowList('127.0.0.0/8').allow),
  };
  await queue.declare([...messagingJobs(ctx), ...webhookJobs(ctx)]);
  return {
    ctx,
    database,
    async close() {
      await queue.stop();
      await database.close();
    },
  };
}
