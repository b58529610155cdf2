import { errorField, log } from '../logging/logger.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import { createSandboxDriver } from './sandbox/index.ts';
import { createCloudApiDriver } from './cloud-api/index.ts';
import { createBaileysDriver } from './baileys/index.ts';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Outbound } from '../outbound/outbound.ts';

/**
 * The networks this build speaks. A contributor adds a folder beside these and one line here.
 * Drivers that need the service's database or settings get them through `options`.
 */
export interface DriverOptions {
  cloudApiBaseUrl: string;
  /** The service's database: session-based drivers keep their state and leases there. */
  db: Kysely<any>;
  /** This process's name among workers (leases of live sessions). */
  worker: string;
  /** The service's secret box: session-based drivers seal their pairing with it. */
  box?: SecretBox;
  /** The outbound policy's fetch: drivers that download customers' media URLs go through it. */
  outbound?: Outbound;
  /** `MAX_MEDIA_BYTES`: lowers the per-kind limits of media drivers download from URLs. */
  maxMediaBytes?: number;
  extra?: NetworkDriver[];
}

/**
 * A driver that keeps a pairing of its own (Baileys' auth state) stores imported session material
 * (the sync flow) through this, inside the transaction that moves the connection. A driver with
 * `sessionImport` but without this keeps nothing but the number (the sandbox).
 */
export interface StoresImportedSessions {
  storeImportedSession(db: Kysely<any>, connectionId: string, material: unknown): Promise<void>;
}

export function createDrivers(options: DriverOptions): Map<string, NetworkDriver> {
  const drivers: NetworkDriver[] = [
    createSandboxDriver(),
    createCloudApiDriver({ baseUrl: options.cloudApiBaseUrl }),
    createBaileysDriver({
      db: options.db,
      box: options.box,
      owner: options.worker,
      outbound: options.outbound,
      maxMediaBytes: options.maxMediaBytes,
      onError: (error, context) => log.error({ driver: 'baileys', context, error: errorField(error) }, 'unofficial session failed'),
    }),
    ...(options.extra ?? []),
  ];
  return new Map(drivers.map((d) => [d.name, d]));
}
