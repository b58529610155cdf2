import { DriverError, SESSION_ELSEWHERE, type NetworkDriver } from '../../core/connections/driver.ts';
import type { Metrics } from './metrics.ts';

/**
 * The drivers as the service uses them, with every network send counted: `sent` when the
 * driver's send resolves, `failed` when it throws (a retryable failure counts each time it
 * happens; a send handed to the worker that holds the session is neither). Everything else of a driver passes through untouched (a proxy, so the optional
 * faces a driver has, or not, stay as they are).
 */
export function countedDrivers(drivers: Map<string, NetworkDriver>, metrics: Metrics): Map<string, NetworkDriver> {
  return new Map([...drivers].map(([name, driver]) => [name, countedDriver(driver, metrics)]));
}

function countedDriver(driver: NetworkDriver, metrics: Metrics): NetworkDriver {
  const send: NetworkDriver['send'] = async (connection, message, media) => {
    try {
      const result = await driver.send(connection, message, media);
      metrics.sendsRecorded(driver.name, 'sent');
      return result;
    } catch (error) {
      if (!(error instanceof DriverError && error.code === SESSION_ELSEWHERE)) metrics.sendsRecorded(driver.name, 'failed');
      throw error;
    }
  };
  return new Proxy(driver, {
    get(target, property, receiver) {
      if (property === 'send') return send;
      const value = Reflect.get(target, property, receiver);
      // Methods run on the driver itself: its private state is not the proxy's.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
