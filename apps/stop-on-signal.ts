import { errorField, type Logger } from '../adapters/logging/logger.ts';

/**
 * The most a stop may take once its own waits are done (requests and sends in flight are each
 * bounded at 10 s, pg-boss's jobs at 5 s): past it the process exits anyway, with code 1, so a
 * service manager never has to escalate to SIGKILL.
 */
export const STOP_BOUND_MS = 30_000;

/**
 * On SIGINT or SIGTERM, runs `stop` once and exits: 0 once it is done, 1 when it fails or is not
 * done within `boundMs` (a second signal meanwhile changes nothing).
 */
export function stopOnSignal(log: Logger, stop: () => Promise<void>, fields: Record<string, unknown> = {}, boundMs = STOP_BOUND_MS): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      log.info({ signal, ...fields }, 'stopping');
      const overdue = setTimeout(() => {
        log.error({ boundMs }, 'stop did not finish in time; exiting');
        process.exit(1);
      }, boundMs);
      try {
        await stop();
      } catch (error) {
        log.error({ error: errorField(error, true) }, 'stop failed');
        process.exit(1);
      }
      clearTimeout(overdue);
      log.info('stopped');
      process.exit(0);
    });
  }
}
