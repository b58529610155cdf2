import type { Kysely } from 'kysely';
import type { SendQueue } from '../../../core/messaging/send-queue.ts';
import type { Database } from '../schema.ts';
import { toMessage } from './message-store.ts';

/** The send queue on the message rows (migration 0021): claims in batches with `FOR UPDATE SKIP LOCKED`. */
export function sendQueue(db: Kysely<Database>): SendQueue {
  return {
    async claimDue(owner, now, leaseUntil, doubtUntil, limit) {
      const due = db
        .selectFrom('messages')
        .select(['id', 'send_state as previous'])
        .where('send_state', 'is not', null)
        .where('send_due_at', '<=', now)
        .orderBy('send_due_at')
        .limit(limit)
        .forUpdate()
        .skipLocked();
      const rows = await db
        .updateTable('messages as m')
        .from(due.as('due'))
        .whereRef('m.id', '=', 'due.id')
        .set((eb) => ({
          // queued, or claimed by a worker that vanished before the wire: claimed (again).
          // in flight when its worker vanished: in doubt. in doubt past its grace: held while given up.
          send_state: eb.case().when('due.previous', 'in', ['in_flight', 'in_doubt']).then('in_doubt').else('claimed').end().$castTo<'in_doubt' | 'claimed'>(),
          send_owner: eb.case().when('due.previous', '=', 'in_flight').then(null).else(owner).end(),
          send_due_at: eb
            .case()
            .when('due.previous', '=', 'in_flight')
            .then(eb.cast<Date>(eb.val(doubtUntil), 'timestamptz'))
            .else(eb.cast<Date>(eb.val(leaseUntil), 'timestamptz'))
            .end(),
        }))
        .returningAll('m')
        .returning('due.previous')
        .execute();
      const claimed = rows.filter((r) => r.previous === 'queued' || r.previous === 'claimed');
      return {
        claimed: claimed.map((row) => ({ message: toMessage(row), attempts: row.send_attempts, hops: row.send_hops })),
        givenUp: rows.filter((r) => r.previous === 'in_doubt').map((r) => r.id),
      };
    },

    async start(owner, ids, leaseUntil) {
      if (ids.length === 0) return new Set();
      const rows = await db
        .updateTable('messages')
        .set({ send_state: 'in_flight', send_due_at: leaseUntil })
        .where('id', 'in', ids)
        .where('send_owner', '=', owner)
        .where('send_state', '=', 'claimed')
        .returning('id')
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    async renew(owner, ids, leaseUntil) {
      if (ids.length === 0) return new Set();
      const rows = await db
        .updateTable('messages')
        .set({ send_due_at: leaseUntil })
        .where('id', 'in', ids)
        .where('send_owner', '=', owner)
        .where('send_state', 'in', ['claimed', 'in_flight'])
        .returning('id')
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    async requeue(owner, sends) {
      // Sends going back together mostly share their due time and counters: one write per kind.
      const alike = new Map<string, { dueAt: Date; attempts: number; hops: number; ids: string[] }>();
      for (const send of sends) {
        const key = `${send.dueAt.getTime()}|${send.attempts}|${send.hops}`;
        const group = alike.get(key) ?? { dueAt: send.dueAt, attempts: send.attempts, hops: send.hops, ids: [] };
        group.ids.push(send.id);
        alike.set(key, group);
      }
      for (const group of alike.values()) {
        await db
          .updateTable('messages')
          .set({ send_state: 'queued', send_owner: null, send_due_at: group.dueAt, send_attempts: group.attempts, send_hops: group.hops })
          .where('id', 'in', group.ids)
          .where('send_owner', '=', owner)
          .where('send_state', 'in', ['claimed', 'in_flight'])
          .execute();
      }
    },

    release: (owner, ids, dueAt) => moveHeld(db, owner, ids, 'claimed', { send_state: 'queued', send_due_at: dueAt }),

    resend: (owner, ids, dueAt) => moveHeld(db, owner, ids, 'in_doubt', { send_state: 'queued', send_due_at: dueAt }),

    async stateOf(id) {
      const row = await db.selectFrom('messages').select('send_state').where('id', '=', id).executeTakeFirst();
      return row?.send_state ?? undefined;
    },

    doubt: (owner, ids, until) => moveHeld(db, owner, ids, 'in_flight', { send_state: 'in_doubt', send_due_at: until }),
  };
}

/** Moves sends `owner` holds in state `from` (its hand leaves them: the owner is cleared). */
async function moveHeld(
  db: Kysely<Database>,
  owner: string,
  ids: readonly string[],
  from: 'claimed' | 'in_flight' | 'in_doubt',
  to: { send_state: 'queued' | 'in_doubt'; send_due_at: Date },
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('messages')
    .set({ ...to, send_owner: null })
    .where('id', 'in', ids)
    .where('send_owner', '=', owner)
    .where('send_state', '=', from)
    .execute();
}
