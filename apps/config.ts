import { DEFAULT_PLANS, PLAN_NAMES, type PlanCatalog } from '../core/plans/plans.ts';
import { DEFAULT_PRESENCE_TTL_SECONDS } from '../core/helpdesk/assignment/presence.ts';
import { parseAllowList, type OutboundAllowList } from '../core/shared/outbound-policy.ts';
import { DEFAULT_ALLOWED_ORIGINS, parseAllowedOrigins, type AllowedOrigins } from '../core/shared/allowed-origins.ts';
import { isLogLevel, LOG_LEVELS, type LogLevel } from '../adapters/logging/logger.ts';

/** Everything the service reads from its environment, checked once at start. */
export interface Config {
  port: number;
  /** `HOST` (default 0.0.0.0, every interface): the address the HTTP server binds. */
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  publicUrl: string;
  /** False when PUBLIC_URL is derived from PORT (then it follows the port actually bound). */
  publicUrlSet: boolean;
  /** `PLUGINS`; undefined means all. */
  plugins: string | undefined;
  plans: PlanCatalog;
  /** `SECRET_KEY` (base64, 32 bytes): seals credentials at rest, and the signing key of links and tickets is derived from it. */
  secretKey: string | undefined;
  /** `CLOUD_API_BASE_URL`: the Graph API the official driver calls. */
  cloudApiBaseUrl: string;
  /** `OAUTH_DYNAMIC_REGISTRATION` (default true): open client registration (RFC 7591). */
  oauthDynamicRegistration: boolean;
  /** `OAUTH_AUTHORIZE_RATE_LIMIT` (15) and `OAUTH_TOKEN_RATE_LIMIT` (120): requests per minute per IP (section 8). */
  oauthRateLimits: { authorize: number; token: number };
  /** `HELPDESK_PRESENCE_TTL_SECONDS` (60, three missed 20 s heartbeats): an agent silent this long shows offline. */
  helpdeskPresenceTtlSeconds: number;
  /** `CAMPAIGN_PACER_MAX_SLEEP_SECONDS` (60): the longest a campaign's pacer sleeps before looking again. */
  campaignPacerMaxSleepSeconds: number;
  /** `SMTP_URL` (`smtp://` or `smtps://`, optional `user:pass@`): invitations are mailed; unset, the inviter gets the link. */
  smtpUrl: string | undefined;
  /** `MAIL_FROM`: the sender of those mails (default `Switchboard <no-reply@host of PUBLIC_URL>`). */
  mailFrom: string | undefined;
  /** `OUTBOUND_ALLOW` (empty): hostnames, IPs and CIDRs the outbound policy lets customer URLs reach. */
  outboundAllow: OutboundAllowList;
  /**
   * `MCP_ALLOWED_ORIGINS` (default `http://localhost:*,http://127.0.0.1:*,http://[::1]:*`): browser origins
   * that may call the MCP endpoint, comma-separated; `*` allows every origin. The service's own origin
   * always may, and requests without `Origin` (non-browser clients) always pass.
   */
  mcpAllowedOrigins: AllowedOrigins;
  /** `MAX_BODY_BYTES` (1 MiB): JSON, form and text bodies larger than this are refused (413). */
  maxBodyBytes: number;
  /** `MAX_MEDIA_BYTES` (16 MiB): uploads larger than this are refused (413). */
  maxMediaBytes: number;
  /** `AUTH_FAILURE_LIMIT` (100): failed API keys, tokens and links per client address and minute before 429. */
  authFailureLimit: number;
  /** `TRUST_PROXY` (0): how many proxies in front of the service append to `X-Forwarded-For`; `true` is 1. */
  trustProxy: number;
  /** `METRICS_TOKEN`: `GET /metrics` on the public port asks for `Authorization: Bearer <this>`; unset, it is 404 there. */
  metricsToken: string | undefined;
  /** `METRICS_PORT`: a second listener on HOST serving only `GET /metrics`, without a token (for a scraper on a private network). */
  metricsPort: number | undefined;
  /** `DATABASE_POOL_SIZE` (10): connections of the process's own pool on Postgres (pg-boss and the realtime adapter add theirs). */
  databasePoolSize: number;
  /** `DRAIN_SECONDS` (0): after SIGTERM, how long `/readyz` answers 503 while the server still serves, before it stops. */
  drainSeconds: number;
  /** `LOG_LEVEL` (info): the least severe log lines written (`trace` … `fatal`, or `silent`). */
  logLevel: LogLevel;
}

export class ConfigError extends Error {}

/** For the processes' entry points: a bad setting is one clear line and exit 1, not a stack trace. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Switchboard could not start: ${error.message}`);
    process.exit(1);
  }
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0);
  return {
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    dataDir: env.DATA_DIR || './.data',
    databaseUrl: env.DATABASE_URL || undefined,
    publicUrl: (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    publicUrlSet: Boolean(env.PUBLIC_URL),
    plugins: env.PLUGINS,
    plans: plans(env),
    secretKey: env.SECRET_KEY || undefined,
    cloudApiBaseUrl: (env.CLOUD_API_BASE_URL || 'https://graph.facebook.com').replace(/\/+$/, ''),
    oauthDynamicRegistration: !['false', '0', 'no', 'off'].includes((env.OAUTH_DYNAMIC_REGISTRATION ?? '').toLowerCase()),
    oauthRateLimits: { authorize: integer(env, 'OAUTH_AUTHORIZE_RATE_LIMIT', 15, 1), token: integer(env, 'OAUTH_TOKEN_RATE_LIMIT', 120, 1) },
    helpdeskPresenceTtlSeconds: integer(env, 'HELPDESK_PRESENCE_TTL_SECONDS', DEFAULT_PRESENCE_TTL_SECONDS, 1),
    campaignPacerMaxSleepSeconds: integer(env, 'CAMPAIGN_PACER_MAX_SLEEP_SECONDS', 60, 1),
    smtpUrl: smtpUrl(env.SMTP_URL),
    mailFrom: env.MAIL_FROM || undefined,
    outboundAllow: outboundAllow(env),
    mcpAllowedOrigins: mcpAllowedOrigins(env),
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1024 * 1024, 1024),
    maxMediaBytes: integer(env, 'MAX_MEDIA_BYTES', 16 * 1024 * 1024, 1024),
    authFailureLimit: integer(env, 'AUTH_FAILURE_LIMIT', 100, 1),
    trustProxy: trustProxy(env),
    metricsToken: metricsToken(env.METRICS_TOKEN),
    metricsPort: env.METRICS_PORT ? portNumber(env, 'METRICS_PORT') : undefined,
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1),
    drainSeconds: integer(env, 'DRAIN_SECONDS', 0, 0),
    logLevel: logLevel(env.LOG_LEVEL),
  };
}

function portNumber(env: Record<string, string | undefined>, key: string): number {
  const value = integer(env, key, 0, 0);
  if (value > 65535) throw new ConfigError(`${key} must be a port number (0 to 65535), got "${env[key]}"`);
  return value;
}

/** Long enough not to be guessed; quoted back never (it is a secret). */
function metricsToken(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (raw.length < 16 || /\s/.test(raw)) throw new ConfigError('METRICS_TOKEN must be at least 16 characters with no spaces (e.g. `openssl rand -hex 32`)');
  return raw;
}

function smtpUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {}
  // Not quoted back: the URL may carry the SMTP password.
  if (!url || !['smtp:', 'smtps:'].includes(url.protocol) || !url.hostname) {
    throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL, e.g. smtps://user:pass@mail.example.com:465');
  }
  return raw;
}

function outboundAllow(env: Record<string, string | undefined>): OutboundAllowList {
  const { allow, problems } = parseAllowList(env.OUTBOUND_ALLOW);
  if (problems.length > 0) throw new ConfigError(`OUTBOUND_ALLOW must list hostnames, IP addresses or CIDRs separated by commas: ${problems.join('; ')}`);
  return allow;
}

function mcpAllowedOrigins(env: Record<string, string | undefined>): AllowedOrigins {
  const { origins, problems } = parseAllowedOrigins(env.MCP_ALLOWED_ORIGINS?.trim() || DEFAULT_ALLOWED_ORIGINS);
  if (problems.length > 0) throw new ConfigError(`MCP_ALLOWED_ORIGINS must list origins separated by commas: ${problems.join('; ')}`);
  return origins;
}

/** `PLAN_<NAME>_CONNECTIONS` and `PLAN_<NAME>_MESSAGES` override the quotas of each plan. */
function plans(env: Record<string, string | undefined>): PlanCatalog {
  const catalog = structuredClone(DEFAULT_PLANS);
  for (const name of PLAN_NAMES) {
    catalog[name].connections = integer(env, `PLAN_${name}_CONNECTIONS`, catalog[name].connections, 0);
    catalog[name].messagesPerMonth = integer(env, `PLAN_${name}_MESSAGES`, catalog[name].messagesPerMonth, 0);
  }
  return catalog;
}

function integer(env: Record<string, string | undefined>, key: string, fallback: number, min: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${key} must be an integer of at least ${min}, got "${raw}"`);
  return value;
}

function logLevel(raw: string | undefined): LogLevel {
  const value = raw?.trim().toLowerCase() || 'info';
  if (!isLogLevel(value)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return value;
}

/** `TRUST_PROXY`: a number of proxies; `true`/`yes`/`on` mean one, `false`/`no`/`off` none. */
function trustProxy(env: Record<string, string | undefined>): number {
  const raw = (env.TRUST_PROXY ?? '').trim().toLowerCase();
  if (['true', 'yes', 'on'].includes(raw)) return 1;
  if (['false', 'no', 'off'].includes(raw)) return 0;
  return integer(env, 'TRUST_PROXY', 0, 0);
}
