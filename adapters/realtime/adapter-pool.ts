import pg from 'pg';

/**
 * The pool `@socket.io/postgres-adapter` (0.3) works on, made safe to shut down. The adapter
 * takes one client for LISTEN and, when that client is lost, takes another every ~2 s for
 * ever; it releases the client on close only if the client had arrived. A service stopped just
 * after it started would then keep a LISTEN client checked out (so `end()` never returns and
 * the database cannot be dropped) and loop on "Cannot use a pool after calling end".
 *
 * Once `closing()` is called, a client that arrives is released at once and the adapter's
 * `connect()` never settles (a pending promise holds no timer, so there is no reconnection
 * loop), and its queries answer empty instead of failing after `end()`.
 */
export class AdapterPool extends pg.Pool {
  #closing = false;

  closing(): void {
    this.#closing = true;
  }

  get isClosing(): boolean {
    return this.#closing;
  }

  // The adapter calls the promise form; pg's own `query` calls the callback form internally.
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: any) => void) => void): void;
  override connect(callback?: any): any {
    if (callback) return super.connect(callback);
    if (this.#closing) return new Promise<pg.PoolClient>(() => {});
    return super.connect().then((client) => {
      if (!this.#closing) return client;
      client.release();
      return new Promise<pg.PoolClient>(() => {});
    });
  }

  override query(...args: any[]): any {
    if (this.#closing) return Promise.resolve({ rows: [], rowCount: 0 });
    return (super.query as (...a: any[]) => any)(...args);
  }
}
