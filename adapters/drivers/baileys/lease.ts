import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Clock } from '../../../core/shared/ports.ts';

/**
 * Session leases (table `connection_leases`, migration 0004): one worker owns the live session
 * of a connection. A lease is taken when there is none, when it expired, or when it is already
 * ours, in one atomic `INSERT ... ON CONFLICT DO UPDATE ... WHERE`, so of workers racing for the
 * same connection exactly one wins. The owner renews it while the session runs; if the owner
 * dies, the lease runs out and the next worker that asks takes the session over.
 *
 * Time: with a `Clock` the lease uses it (tests move time); without one it uses the database's
 * `now()`, so workers whose clocks disagree still agree on who holds a lease.
 */
export interface LeaseHolder {
  owner: string;
  expiresAt: Date;
}

/** Owner of a lease revoked by `revoke`: the worker running the session stops it (and logs out). */
export const REVOKED_PREFIX = 'revoked:';
export type RevokeAction = 'disconnect' | 'logout';

export class LeaseStore {
  constructor(
    private readonly db: Kysely<any>,
    private readonly clock?: Clock,
  ) {}

  /** Takes the lease if free, expired or already ours; true when we hold it afterwards. */
  async acquire(connectionId: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const expires = this.plus(ttlMs);
    const result = await sql<{ owner: string }>`
      insert into connection_leases as l (connection_id, owner, expires_at, acquired_at)
      values (${connectionId}, ${owner}, ${expires}, ${now})
      on conflict (connection_id) do update
        set owner = excluded.owner,
            expires_at = excluded.expires_at,
            acquired_at = case when l.owner = excluded.owner then l.acquired_at else excluded.acquired_at end
        where l.expires_at <= ${now} or l.owner = excluded.owner
      returning l.owner`.execute(this.db);
    return result.rows.length === 1;
  }

  /** Extends our lease; false when it is no longer ours (taken over or revoked). */
  async renew(connectionId: string, owner: string, ttlMs: number): Promise<boolean> {
    const result = await sql<{ owner: string }>`
      update connection_leases set expires_at = ${this.plus(ttlMs)}
      where connection_id = ${connectionId} and owner = ${owner}
      returning owner`.execute(this.db);
    return result.rows.length === 1;
  }

  /** Gives our lease up at once; false when it was not ours. */
  async release(connectionId: string, owner: string): Promise<boolean> {
    const result = await sql`delete from connection_leases where connection_id = ${connectionId} and owner = ${owner} returning owner`.execute(this.db);
    return result.rows.length === 1;
  }

  /**
   * Takes the lease away from whoever holds it, leaving a mark of why: the holder's next renewal
   * fails, it reads the mark and stops its session (logging out for `logout`). The revoked lease
   * is expired at once, so any worker may take the connection afterwards.
   */
  async revoke(connectionId: string, action: RevokeAction): Promise<void> {
    await sql`update connection_leases set owner = ${REVOKED_PREFIX + action}, expires_at = ${this.now()}
      where connection_id = ${connectionId}`.execute(this.db);
  }

  /** Who holds the lease (possibly expired), if anyone. */
  async holder(connectionId: string): Promise<LeaseHolder | undefined> {
    const row = await this.db
      .selectFrom('connection_leases')
      .select(['owner', 'expires_at'])
      .where('connection_id', '=', connectionId)
      .executeTakeFirst();
    return row ? { owner: row.owner, expiresAt: new Date(row.expires_at) } : undefined;
  }

  private now(): RawBuilder<Date> {
    return this.clock ? sql<Date>`${this.clock.now().toISOString()}::timestamptz` : sql<Date>`now()`;
  }

  private plus(ms: number): RawBuilder<Date> {
    const seconds = Math.max(0, ms) / 1000;
    return this.clock
      ? sql<Date>`${new Date(this.clock.now().getTime() + ms).toISOString()}::timestamptz`
      : sql<Date>`now() + make_interval(secs => ${seconds}::double precision)`;
  }
}

/** The revoke action encoded in a holder's owner, if the lease was revoked. */
export function revokedAction(holder: LeaseHolder | undefined): RevokeAction | undefined {
  if (!holder?.owner.startsWith(REVOKED_PREFIX)) return undefined;
  const action = holder.owner.slice(REVOKED_PREFIX.length);
  return action === 'logout' || action === 'disconnect' ? action : undefined;
}

/** Timers behind a port, so tests run the keeper and the reconnect backoff by hand. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    // A keeper or a pending reconnect must not keep the process alive on its own.
    (handle as { unref?: () => void }).unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface LeaseKeeperOptions {
  owner: string;
  ttlMs: number;
  /** How often to renew; a third of the TTL leaves two chances before the lease runs out. */
  intervalMs?: number;
  timers?: Timers;
  /** Milliseconds now, for judging how long renewals have failed (default: the wall clock). */
  now?: () => number;
  /** The lease is gone: `holder` is who has it now (a revoke mark, another worker, or none). */
  onLost(connectionId: string, holder: LeaseHolder | undefined): void | Promise<void>;
  onError?(error: unknown): void;
}

/**
 * Renews the leases of the sessions this worker runs. A renewal that finds the lease gone reports
 * it lost. A renewal that fails (the database is unreachable) is retried on the next tick; once
 * renewals have failed for longer than the TTL another worker may hold the session, so the lease
 * is reported lost too.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, number>();
  private handle: unknown;
  private running = false;
  private readonly intervalMs: number;
  private readonly timers: Timers;
  private readonly now: () => number;

  constructor(
    private readonly leases: LeaseStore,
    private readonly options: LeaseKeeperOptions,
  ) {
    this.intervalMs = options.intervalMs ?? Math.max(1, Math.floor(options.ttlMs / 3));
    this.timers = options.timers ?? realTimers;
    this.now = options.now ?? (() => Date.now());
  }

  /** Starts keeping a lease this worker just acquired. */
  add(connectionId: string): void {
    this.held.set(connectionId, this.now());
    this.schedule();
  }

  remove(connectionId: string): void {
    this.held.delete(connectionId);
    if (this.held.size === 0) this.cancel();
  }

  has(connectionId: string): boolean {
    return this.held.has(connectionId);
  }

  /** One round of renewals (the timer calls it; tests may too). */
  async tick(): Promise<void> {
    for (const [connectionId, lastRenewed] of [...this.held]) {
      let lost = false;
      let holder: LeaseHolder | undefined;
      try {
        if (await this.leases.renew(connectionId, this.options.owner, this.options.ttlMs)) {
          if (this.held.has(connectionId)) this.held.set(connectionId, this.now());
          continue;
        }
        lost = true;
        holder = await this.leases.holder(connectionId).catch(() => undefined);
      } catch (error) {
        this.options.onError?.(error);
        lost = this.now() - lastRenewed > this.options.ttlMs;
      }
      if (lost && this.held.delete(connectionId)) {
        try {
          await this.options.onLost(connectionId, holder);
        } catch (error) {
          this.options.onError?.(error);
        }
      }
    }
  }

  stop(): void {
    this.held.clear();
    this.cancel();
  }

  private schedule(): void {
    if (this.running || this.held.size === 0) return;
    this.running = true;
    this.handle = this.timers.setTimeout(() => {
      this.running = false;
      this.handle = undefined;
      void this.tick().finally(() => this.schedule());
    }, this.intervalMs);
  }

  private cancel(): void {
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.handle = undefined;
    this.running = false;
  }
}
