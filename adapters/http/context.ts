import type { Kysely } from 'kysely';
import type { Clock, IdGen, Random } from '../../core/shared/ports.ts';
import type { PlanCatalog } from '../../core/plans/plans.ts';
import type { Database } from '../postgres/schema.ts';
import type { JobQueue } from '../queue/queue.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { ServiceKeys } from '../crypto/service-keys.ts';
import type { RouteScopeTable } from './route-scopes.ts';

/** What every feature (base or plugin) is built from. */
export interface AppContext {
  db: Kysely<Database>;
  queue: JobQueue;
  clock: Clock;
  ids: IdGen;
  random: Random;
  plans: PlanCatalog;
  config: {
    publicUrl: string;
    /** Dynamic client registration (RFC 7591) is open; `OAUTH_DYNAMIC_REGISTRATION=false` closes it. */
    dynamicRegistration?: boolean;
    /** Requests per minute per IP (section 8): token/revoke/introspect, and authorize/register. */
    oauthRateLimits?: { token: number; authorize: number };
  };
  /** Which OAuth scopes open which route: the base table plus the enabled plugins' rows. */
  routeScopes: RouteScopeTable;
  keys: ServiceKeys;
  /** Seals connection credentials at rest. */
  box: SecretBox;
  drivers: ReadonlyMap<string, NetworkDriver>;
  /** Events some enabled plugin subscribes to: the event store queues a `plugins.events` job for these. */
  pluginEvents?: ReadonlySet<string>;
}
