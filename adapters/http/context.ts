import type { Kysely } from 'kysely';
import type { Clock, IdGen, Random } from '../../core/shared/ports.ts';
import type { PlanCatalog } from '../../core/plans/plans.ts';
import type { Database } from '../postgres/schema.ts';
import type { JobQueue } from '../queue/queue.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { ServiceKeys } from '../crypto/service-keys.ts';

/** What every feature (base or plugin) is built from. */
export interface AppContext {
  db: Kysely<Database>;
  queue: JobQueue;
  clock: Clock;
  ids: IdGen;
  random: Random;
  plans: PlanCatalog;
  config: { publicUrl: string };
  keys: ServiceKeys;
  /** Seals connection credentials at rest. */
  box: SecretBox;
  drivers: ReadonlyMap<string, NetworkDriver>;
}
