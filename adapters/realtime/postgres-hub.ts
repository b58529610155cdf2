import { errorField, log } from '../logging/logger.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Emitter } from '@socket.io/postgres-emitter';
import pg from 'pg';
import { ACCESS_CHANGED, type OpenRealtimeHub } from './hub.ts';

/**
 * The hub on Postgres: `@socket.io/postgres-emitter` publishes each emit as a NOTIFY (or, past
 * 8000 bytes, a row of `socket_io_attachments` plus a NOTIFY of its id) that the
 * `@socket.io/postgres-adapter` of every server process turns into a broadcast to its sockets.
 *
 * The emitter fires and forgets: `emit()` does not return the query it starts, and a failed
 * query makes it broadcast an "error" event through the same pool (again on failure). The pool
 * it is given here is a facade that records the queries an emit starts, so `emit` resolves when
 * they are done and rejects when one fails (a job can then retry), and that keeps failures from
 * the emitter, which would otherwise turn them into that "error" broadcast.
 */
export function postgresHub(databaseUrl: string): OpenRealtimeHub {
  // Small: an emit is one short query; the pool is separate from Kysely's and pg-boss's.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', (error) => log.error({ error: errorField(error) }, 'realtime hub idle connection failed'));
  const started = new AsyncLocalStorage<Promise<unknown>[]>();
  const facade = {
    query(text: string, values?: unknown[]) {
      const running = pool.query(text, values);
      started.getStore()?.push(running);
      return running.catch(() => new Promise<never>(() => {}));
    },
  };
  const emitter = new Emitter(facade);
  let closed = false;

  /** Runs an emitter call and resolves once the queries it started are done. */
  async function publish(send: () => void): Promise<void> {
    if (closed) throw new Error('The realtime hub is closed');
    const queries: Promise<unknown>[] = [];
    started.run(queries, send);
    // A large packet takes two queries, the second started once the first returns: wait until
    // a turn of the event loop passes with nothing new started.
    for (let done = 0; done < queries.length; ) {
      const batch = queries.slice(done);
      done = queries.length;
      await Promise.all(batch);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  return {
    async emit(namespace, rooms, event, payload) {
      if (closed) throw new Error('The realtime hub is closed');
      if (rooms.length === 0) return;
      await publish(() => emitter.of(namespace).to([...rooms]).emit(event, payload));
    },
    async accessChanged(change) {
      // A server-side emit on the main namespace: every server process's adapter gets it (the
      // emitter's packets are from no server, so none ignores it as its own), no client does.
      await publish(() => emitter.serverSideEmit(ACCESS_CHANGED, change));
    },
    attach() {
      return () => {};
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
