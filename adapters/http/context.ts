import type { Kysely } from 'kysely';
import type { Clock, IdGen, Random } from '../../core/shared/ports.ts';
import type { PlanCatalog } from '../../core/plans/plans.ts';
import type { Database } from '../postgres/schema.ts';
import type { Storage } from '../postgres/storage.ts';
import type { JobQueue } from '../queue/queue.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { ServiceKeys } from '../crypto/service-keys.ts';
import type { RouteScopeTable } from './route-scopes.ts';
import type { RealtimeHub } from '../realtime/hub.ts';
import type { DeliveryTargetFinder } from '../webhooks/endpoints.ts';
import type { RawRecipient } from '../../core/campaigns/audience.ts';
import type { TemplateComponentRules } from '../../core/templates/component-rules.ts';
import type { Mailer } from '../../core/identity/invitation-mail.ts';
import type { Outbound } from '../outbound/outbound.ts';
import type { AllowedOrigins } from '../../core/shared/allowed-origins.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Logger } from '../logging/logger.ts';
import type { Readiness } from './readiness.ts';
import type { PluginEventConnections, PluginEventTests } from '../postgres/repositories/event-store.ts';

/**
 * A plugin's audience for campaigns: given the workspace and the request's value for its field
 * of `audience` (e.g. `{ labels: [...] }`), the recipients with their variables. Throws a
 * DomainError (400) on a value it does not understand.
 */
export type AudienceSource = (db: Kysely<Database>, workspaceId: string, spec: unknown) => Promise<RawRecipient[]>;

/** What every feature (base or plugin) is built from. */
export interface AppContext {
  db: Kysely<Database>;
  /** The database as features other than the base see it: stores and units of work, no raw pool. */
  storage: Storage<AppContext>;
  queue: JobQueue;
  clock: Clock;
  ids: IdGen;
  random: Random;
  /** The process's logger (adapters/logging/logger.ts): JSON lines, never a secret or a message's content. */
  log: Logger;
  /** What `/readyz` answers: the process's phase (starting, serving, draining) and its checks. */
  readiness: Readiness;
  plans: PlanCatalog;
  config: {
    publicUrl: string;
    /** Dynamic client registration (RFC 7591) is open; `OAUTH_DYNAMIC_REGISTRATION=false` closes it. */
    dynamicRegistration?: boolean;
    /** Requests per minute per IP (section 8): token/revoke/introspect, and authorize/register. */
    oauthRateLimits?: { token: number; authorize: number };
    /** `HELPDESK_PRESENCE_TTL_SECONDS`: an agent with no heartbeat for this long shows offline (spec 3.7). */
    helpdeskPresenceTtlSeconds?: number;
    /** `CAMPAIGN_PACER_MAX_SLEEP_SECONDS`: the longest a campaign's pacer sleeps before looking again. */
    campaignPacerMaxSleepSeconds?: number;
    /** `MAX_BODY_BYTES` (1 MiB): the largest JSON, form or text body read. */
    maxBodyBytes?: number;
    /** `MAX_MEDIA_BYTES` (16 MiB): the largest upload read. */
    maxMediaBytes?: number;
    /** `AUTH_FAILURE_LIMIT`: failed credentials per client address and minute before 429 (adapters/http/auth-failures.ts). */
    authFailureLimit?: number;
    /** `MCP_ALLOWED_ORIGINS`: browser origins that may call the MCP endpoint (unset: the default of core/shared/allowed-origins.ts). */
    mcpAllowedOrigins?: AllowedOrigins;
    /** `TRUST_PROXY`: proxies in front of the service whose `X-Forwarded-For` entry names the client (0: none). */
    trustProxy?: number;
    /** `METRICS_TOKEN`: the bearer secret that opens `GET /metrics` on the public port (unset: 404 there). */
    metricsToken?: string;
  };
  /** The TCP peer's address of a request, once the server listens (set by apps/server). */
  peerAddress?: (request: Request) => string | undefined;
  /** Which OAuth scopes open which route: the base table plus the enabled plugins' rows. */
  routeScopes: RouteScopeTable;
  keys: ServiceKeys;
  /** Seals connection credentials at rest. */
  box: SecretBox;
  drivers: ReadonlyMap<string, NetworkDriver>;
  /** The outbound policy (`OUTBOUND_ALLOW`) and the one fetch every call to a customer's URL goes through. */
  outbound: Outbound;
  /**
   * Emits to websocket rooms on every server process (spec 6.7), from servers and workers alike.
   * Always set by the runtime; absent only in contexts that tests assemble by hand.
   */
  realtime?: RealtimeHub;
  /** The enabled plugins' kinds of webhook, by delivery target (`helpdesk`): one delivery engine for all. */
  deliveryTargets?: ReadonlyMap<string, DeliveryTargetFinder>;
  /** Template component types the enabled plugins teach (`CAROUSEL`), by upper-case type. */
  templateComponents?: TemplateComponentRules;
  /** Audiences other plugins offer to campaigns (`helpdeskContacts`), by name. */
  audienceSources?: ReadonlyMap<string, AudienceSource>;
  /** Events some enabled plugin subscribes to: the event store queues a `plugins.events` job for these. */
  pluginEvents?: ReadonlySet<string>;
  /** Of those, the events the plugins take only on the connections their tables name (event-store.ts). */
  pluginEventConnections?: PluginEventConnections;
  /** Of those, the events some plugin still takes anywhere when a test of their data passes (event-store.ts). */
  pluginEventTests?: PluginEventTests;
  /** The helpdesk plugin is loaded (`PLUGINS`): the helpdesk works for every workspace (`helpdeskEnabled`, spec 2.3). */
  helpdesk?: boolean;
  /** Set when `SMTP_URL` is: invitations are mailed instead of handed to the inviter. */
  mailer?: Mailer;
  /** The process's metrics (`GET /metrics`). Always set by the runtime; absent only in contexts that tests assemble by hand. */
  metrics?: Metrics;
}

/**
 * What an application keeps one of (the send batcher, the auth failure counts), made on first
 * use: held by the context, so every app built (each test's, say) has its own.
 */
export function onePerContext<T>(create: (ctx: AppContext) => T): (ctx: AppContext) => T {
  const made = new WeakMap<AppContext, T>();
  return (ctx) => {
    let instance = made.get(ctx);
    if (!instance) made.set(ctx, (instance = create(ctx)));
    return instance;
  };
}
