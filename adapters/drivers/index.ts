import type { NetworkDriver } from '../../core/connections/driver.ts';
import { createSandboxDriver } from './sandbox/index.ts';
import { createCloudApiDriver } from './cloud-api/index.ts';

/**
 * The networks this build speaks. A contributor adds a folder beside these and one line here.
 * Drivers that need the service's database or settings get them through `options`.
 */
export interface DriverOptions {
  cloudApiBaseUrl: string;
  extra?: NetworkDriver[];
}

export function createDrivers(options: DriverOptions): Map<string, NetworkDriver> {
  const drivers: NetworkDriver[] = [createSandboxDriver(), createCloudApiDriver({ baseUrl: options.cloudApiBaseUrl }), ...(options.extra ?? [])];
  return new Map(drivers.map((d) => [d.name, d]));
}
