import { sql, type Kysely } from 'kysely';
import type { SendQueue } from '../../../core/messaging/send-queue.ts';
import { amongPicked, anyOf, pickedKeys } from '../any-of.ts';
import { compiledOnce } from '../compiled-once.ts';
import type { Database } from '../schema.ts';
import { toMessage } from './message-store.ts';

/**
 * The send queue on the message rows (migration 0021): claims in batches with `FOR UPDATE SKIP LOCKED`.
 * Every statement runs once or more per batch of sends: each is of one shape (a batch's ids are one
 * array parameter), compiled once, and Postgres plans one statement text.
 */
export function sendQueue(db: Kysely<Database>): SendQueue {
  return {
    async claimDue(owner, now, leaseUntil, doubtUntil, limit) {
      const { rows } = await claimDue(db, owner, now, leaseUntil, doubtUntil, limit);
      return {
        claimed: rows.filter((r) => previousState(r) === 'claimable').map((row) => ({ message: toMessage(row), attempts: row.send_attempts, hops: row.send_hops })),
        givenUp: rows.filter((r) => previousState(r) === 'in_doubt').map((r) => r.id),
      };
    },

    async start(owner, ids, leaseUntil, keepLeaseFrom) {
      if (ids.length === 0) return new Set();
      const { rows } = await start(db, owner, [...ids], leaseUntil, keepLeaseFrom);
      return new Set(rows.map((r) => r.id));
    },

    async renew(owner, ids, leaseUntil) {
      if (ids.length === 0) return new Set();
      const { rows } = await renew(db, owner, [...ids], leaseUntil);
      return new Set(rows.map((r) => r.id));
    },

    async requeue(owner, sends) {
      if (sends.length === 0) return;
      // Each send its own due time and counters, joined from arrays: one write for the batch.
      await requeue(
        db,
        owner,
        sends.map((s) => s.id),
        sends.map((s) => s.dueAt.toISOString()),
        sends.map((s) => s.attempts),
        sends.map((s) => s.hops),
      );
    },

    release: (owner, ids, dueAt) => moveHeld(db, owner, ids, 'claimed', 'queued', dueAt),

    resend: (owner, ids, dueAt) => moveHeld(db, owner, ids, 'in_doubt', 'queued', dueAt),

    async stateOf(id) {
      const { rows } = await stateOf(db, id);
      return rows[0]?.send_state ?? undefined;
    },

    doubt: (owner, ids, until) => moveHeld(db, owner, ids, 'in_flight', 'in_doubt', until),
  };
}


/**
 * The guard on a send's state, written so that the planner finds a batch's rows by primary key:
 * a guard the planner can match to a partial index's predicate lets it pick that index, and with
 * statistics taken while the queue was short Postgres scanned the whole queue for a batch's few
 * ids (behind a queue of 50,000 sends, 6 ms a statement instead of 0.4). coalesce() matches no
 * predicate.
 */
const stateIn = (states: ReadonlyArray<'queued' | 'claimed' | 'in_flight' | 'in_doubt'>) => sql<boolean>`coalesce(send_state, '') in (${sql.join(states.map((state) => sql.lit(state)))})`;

/**
 * The due rows are picked and locked in a subquery and the update finds them by primary key (`pickedKeys`);
 * what each was before is read off what the claim made of it (`previousState`).
 */
const claimDue = compiledOnce((db: Kysely<Database>, owner: string, now: Date, leaseUntil: Date, doubtUntil: Date, limit: number) => {
  const due = db
    .selectFrom('messages')
    .select('id')
    .where('send_due_at', 'is not', null)
    .where('send_due_at', '<=', now)
    .orderBy('send_due_at')
    .limit(limit)
    .forUpdate()
    .skipLocked();
  return db
    .with('picked', pickedKeys(due))
    .updateTable('messages')
    .from('picked')
    .set((eb) => ({
      // queued, or claimed by a worker that vanished before the wire: claimed (again).
      // in flight when its worker vanished: in doubt. in doubt past its grace: held while given up.
      send_state: eb.case().when('send_state', 'in', ['in_flight', 'in_doubt']).then('in_doubt').else('claimed').end().$castTo<'in_doubt' | 'claimed'>(),
      send_owner: eb.case().when('send_state', '=', 'in_flight').then(null).else(owner).end(),
      send_due_at: eb
        .case()
        .when('send_state', '=', 'in_flight')
        .then(eb.cast<Date>(eb.val(doubtUntil), 'timestamptz'))
        .else(eb.cast<Date>(eb.val(leaseUntil), 'timestamptz'))
        .end(),
    }))
    .where(amongPicked('messages.id'))
    .returningAll('messages');
});

/** What a claimed row was before the claim, read off what the claim made of it (the claim's cases, backwards). */
function previousState(row: { send_state: string | null; send_owner: string | null }): 'claimable' | 'in_flight' | 'in_doubt' {
  if (row.send_state === 'claimed') return 'claimable';
  return row.send_owner === null ? 'in_flight' : 'in_doubt';
}

/**
 * A lease that lasts until `keepLeaseFrom` or later is left as it is: the row's indexed columns
 * then stay unchanged and Postgres rewrites it in place (a HOT update, migration 0022).
 */
const start = compiledOnce((db: Kysely<Database>, owner: string, ids: string[], leaseUntil: Date, keepLeaseFrom: Date) =>
  db
    .updateTable('messages')
    .set((eb) => ({
      send_state: 'in_flight',
      send_due_at: eb
        .case()
        .when('send_due_at', '>=', eb.cast<Date>(eb.val(keepLeaseFrom), 'timestamptz'))
        .then(eb.ref('send_due_at'))
        .else(eb.cast<Date>(eb.val(leaseUntil), 'timestamptz'))
        .end(),
    }))
    .where('id', '=', anyOf(ids, 'uuid'))
    .where('send_owner', '=', owner)
    .where(stateIn(['claimed']))
    .returning('id'),
);

const renew = compiledOnce((db: Kysely<Database>, owner: string, ids: string[], leaseUntil: Date) =>
  db
    .updateTable('messages')
    .set({ send_due_at: leaseUntil })
    .where('id', '=', anyOf(ids, 'uuid'))
    .where('send_owner', '=', owner)
    .where(stateIn(['claimed', 'in_flight']))
    .returning('id'),
);

const requeue = compiledOnce((db: Kysely<Database>, owner: string, ids: string[], dueAts: string[], attempts: number[], hops: number[]) =>
  db
    .updateTable('messages')
    .from(
      sql<{ id: string; due_at: Date; attempts: number; hops: number }>`unnest(${ids}::uuid[], ${dueAts}::timestamptz[], ${attempts}::int[], ${hops}::int[])`.as<'back'>(
        sql`back(id, due_at, attempts, hops)`,
      ),
    )
    .set((eb) => ({
      send_state: 'queued',
      send_owner: null,
      send_due_at: eb.ref('back.due_at'),
      send_attempts: eb.ref('back.attempts'),
      send_hops: eb.ref('back.hops'),
    }))
    .whereRef('messages.id', '=', 'back.id')
    .where('messages.send_owner', '=', owner)
    .where(stateIn(['claimed', 'in_flight']))
);

const stateOf = compiledOnce((db: Kysely<Database>, id: string) => db.selectFrom('messages').select('send_state').where('id', '=', id));

/** Moves sends `owner` holds in state `from` (its hand leaves them: the owner is cleared). */
async function moveHeld(
  db: Kysely<Database>,
  owner: string,
  ids: readonly string[],
  from: 'claimed' | 'in_flight' | 'in_doubt',
  to: 'queued' | 'in_doubt',
  dueAt: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await moveHeldStatement(db, owner, [...ids], from, to, dueAt);
}

const moveHeldStatement = compiledOnce(
  (db: Kysely<Database>, owner: string, ids: string[], from: 'claimed' | 'in_flight' | 'in_doubt', to: 'queued' | 'in_doubt', dueAt: Date) =>
    db
      .updateTable('messages')
      .set({ send_state: to, send_due_at: dueAt, send_owner: null })
      .where('id', '=', anyOf(ids, 'uuid'))
      .where('send_owner', '=', owner)
      .where(sql<boolean>`coalesce(send_state, '') = ${from}`),
);
