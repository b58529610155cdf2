import { databaseStorage } from '../adapters/postgres/storage.ts';
import { followPlanQuotas } from '../core/plans/metering.ts';
import { baseStores } from '../adapters/postgres/stores.ts';
import { openDatabase, type DatabaseHandle } from '../adapters/postgres/database.ts';
import { BASE_MIGRATIONS, migrate, migrationState, type MigrationSet } from '../adapters/postgres/migrator.ts';
import { JobQueue, type JobDefinition } from '../adapters/queue/queue.ts';
import { secureRandom, systemClock, uuidV7 } from '../adapters/system.ts';
import type { Clock } from '../core/shared/ports.ts';
import type { AppContext } from '../adapters/http/context.ts';
import { BASE_ROUTE_SCOPES, routeScopeTable } from '../adapters/http/route-scopes.ts';
import { loadServiceKeys } from '../adapters/crypto/service-keys.ts';
import { secretBox } from '../adapters/crypto/secret-box.ts';
import { createDrivers } from '../adapters/drivers/index.ts';
import { createOutbound } from '../adapters/outbound/outbound.ts';
import { messagingJobs } from '../adapters/connections/jobs.ts';
import { webhookJobs } from '../adapters/webhooks/jobs.ts';
import { pluginEventConnections, pluginEventJobs, pluginEvents, pluginEventTests } from './plugin-events.ts';
import { AVAILABLE_PLUGINS } from '../plugins/index.ts';
import { parsePluginList, resolvePlugins } from '../plugins/kernel/loader.ts';
import type { Plugin } from '../plugins/kernel/plugin.ts';
import type { Config } from './config.ts';
import { hostname } from 'node:os';
import { holdDataDir, type DataDirLock } from './data-dir-lock.ts';
import { openRealtimeHub, type OpenRealtimeHub } from '../adapters/realtime/hub.ts';
import { defaultMailFrom, smtpMailer } from '../adapters/mail/smtp-mailer.ts';
import { createMetrics } from '../adapters/metrics/metrics.ts';
import { countedDrivers } from '../adapters/metrics/counted-drivers.ts';
import { serviceGauges } from '../adapters/metrics/service-gauges.ts';
import { createLogger } from '../adapters/logging/logger.ts';
import { databaseCheck, Readiness } from '../adapters/http/readiness.ts';

/** What server, worker and CLI share: the database (migrated), the queue, the enabled plugins. */
export interface Runtime {
  ctx: AppContext;
  plugins: Plugin[];
  database: DatabaseHandle;
  jobs: JobDefinition[];
  /** `ctx.realtime` as its owner holds it: a server process attaches its Socket.IO server. */
  realtime: OpenRealtimeHub;
  close(): Promise<void>;
}

/**
 * `clock`: the service's notion of now (tests of a simulated day pass a model clock; the queue's
 * own timing stays real).
 */
export async function openRuntime(config: Config, options: { available?: Plugin[]; clock?: Clock } = {}): Promise<Runtime> {
  const available = options.available ?? AVAILABLE_PLUGINS;
  const plugins = resolvePlugins(available, parsePluginList(config.plugins, available));
  const embedded = !config.databaseUrl;
  const lock: DataDirLock | undefined = embedded && !config.dataDir.startsWith('memory://') ? holdDataDir(config.dataDir) : undefined;
  try {
    const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
    // Every available plugin's migrations are known, enabled or not: a newer version's are refused.
    await migrate(database.db, migrationSets(plugins), migrationSets(available));
    const queue = await JobQueue.start(database);
    const keys = await loadServiceKeys(database.db, config.secretKey);
    const realtime = openRealtimeHub({ databaseUrl: config.databaseUrl });
    const box = secretBox(keys.sealing);
    const outbound = createOutbound(config.outboundAllow);
    const metrics = createMetrics();
    const ctx: AppContext = {
      db: database.db,
      storage: databaseStorage(database.db, () => ctx),
      queue,
      clock: options.clock ?? systemClock,
      ids: uuidV7,
      random: secureRandom,
      log: createLogger({ level: config.logLevel }),
      readiness: new Readiness()
        .check('database', databaseCheck(database))
        .check('migrations', async () => {
          const { pending, unknown } = await migrationState(database.db, migrationSets(plugins), migrationSets(available));
          if (unknown.length > 0) return `unknown to this version: ${unknown.join(', ')}`;
          return pending.length > 0 ? `not applied: ${pending.join(', ')}` : undefined;
        }),
      plans: config.plans,
      config: {
        publicUrl: config.publicUrl,
        dynamicRegistration: config.oauthDynamicRegistration,
        oauthRateLimits: config.oauthRateLimits,
        helpdeskPresenceTtlSeconds: config.helpdeskPresenceTtlSeconds,
        campaignPacerMaxSleepSeconds: config.campaignPacerMaxSleepSeconds,
        maxBodyBytes: config.maxBodyBytes,
        maxMediaBytes: config.maxMediaBytes,
        authFailureLimit: config.authFailureLimit,
        trustProxy: config.trustProxy,
        mcpAllowedOrigins: config.mcpAllowedOrigins,
        metricsToken: config.metricsToken,
      },
      routeScopes: routeScopeTable([...BASE_ROUTE_SCOPES, ...plugins.flatMap((p) => p.routeScopes ?? [])]),
      keys,
      box,
      // Every network send is counted, whichever path makes it (adapters/metrics/counted-drivers.ts).
      drivers: countedDrivers(createDrivers({ cloudApiBaseUrl: config.cloudApiBaseUrl, db: database.db, worker: workerName(), box, outbound, maxMediaBytes: config.maxMediaBytes }), metrics),
      outbound,
      pluginEvents: pluginEvents(plugins),
      pluginEventConnections: pluginEventConnections(plugins),
      pluginEventTests: pluginEventTests(plugins),
      helpdesk: plugins.some((p) => p.name === 'helpdesk'),
      realtime,
      deliveryTargets: new Map(plugins.flatMap((p) => Object.entries(p.deliveryTargets ?? {}))),
      audienceSources: new Map(plugins.flatMap((p) => Object.entries(p.audienceSources ?? {}))),
      templateComponents: new Map(plugins.flatMap((p) => Object.entries(p.templateComponents ?? {}))),
      ...(config.smtpUrl && { mailer: smtpMailer(config.smtpUrl, config.mailFrom ?? defaultMailFrom(config.publicUrl)) }),
      metrics,
    };
    for (const gauge of [...serviceGauges(database.db, database), ...plugins.flatMap((p) => p.gauges?.(ctx) ?? [])]) metrics.addGauge(gauge);
    // Quotas follow configuration at once: this month's accounts move to the configured numbers.
    await database.db.transaction().execute((trx) => followPlanQuotas(baseStores(trx).credits, ctx));
    const jobs = [...messagingJobs(ctx), ...webhookJobs(ctx), ...pluginEventJobs(ctx, plugins), ...plugins.flatMap((p) => (typeof p.jobs === 'function' ? p.jobs(ctx) : p.jobs ?? []))];
    await queue.declare(jobs);
    return {
      ctx,
      plugins,
      database,
      jobs,
      realtime,
      async close() {
        for (const driver of ctx.drivers.values()) await driver.shutdown?.().catch(() => {});
        await queue.stop();
        // After the workers stopped: their jobs may emit until then.
        await realtime.close();
        await database.close();
        lock?.release();
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** This process's name among workers: unique per process, readable in the leases table. */
function workerName(): string {
  return `${hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
}

function migrationSets(plugins: Plugin[]): MigrationSet[] {
  return [BASE_MIGRATIONS, ...plugins.filter((p) => p.migrations).map((p) => ({ module: p.name, migrations: p.migrations! }))];
}
