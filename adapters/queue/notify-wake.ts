import pg from 'pg';
import type { DatabaseHandle } from '../postgres/database.ts';
import { errorField, log } from '../logging/logger.ts';

/** Reconnection delay of a lost listening connection (polling covers the gap). */
const RECONNECT_MS = 1000;

/**
 * Calls `wake` on every NOTIFY on `channel` (a constant identifier: it is spelled into LISTEN),
 * and once each time listening (re)starts, for what was announced while it was not. On Postgres
 * a connection of its own stays on LISTEN and comes back after a loss; on the embedded database
 * PGlite delivers notifications to its own listeners. Returns the stop.
 */
export function wakeOnNotify(database: DatabaseHandle, channel: string, wake: () => void): () => Promise<void> {
  if (database.pglite) {
    const listening = database.pglite.listen(channel, () => wake()).then((unlisten) => {
      wake();
      return unlisten;
    });
    return async () => (await listening)();
  }
  if (!database.url) return async () => {};
  const url = database.url;
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;

  async function listen(): Promise<void> {
    const connection = new pg.Client({ connectionString: url });
    client = connection;
    connection.on('notification', () => wake());
    connection.on('error', (error) => log.error({ channel, error: errorField(error) }, 'listening connection failed'));
    connection.on('end', () => {
      if (!stopped && client === connection) retry = setTimeout(() => void listen(), RECONNECT_MS);
    });
    try {
      await connection.connect();
      await connection.query(`listen ${channel}`);
      wake();
    } catch (error) {
      log.error({ channel, error: errorField(error) }, 'cannot listen');
      await connection.end().catch(() => {});
    }
  }

  void listen();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
