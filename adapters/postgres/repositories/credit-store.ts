import type { Kysely } from 'kysely';
import type { CreditStore, Reservation, ReservationStatus } from '../../../core/plans/index.ts';
import type { Database } from '../schema.ts';

export function creditStore(db: Kysely<Database>): CreditStore {
  async function lockAccount(workspaceId: string) {
    const row = await db.selectFrom('credit_accounts').selectAll().where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst();
    return row && { workspaceId: row.workspace_id, periodStart: row.period_start, available: row.available };
  }

  return {
    lockAccount,

    async createAccount(a) {
      // A concurrent opener's row wins (this insert waits for it); then lock whichever row is stored.
      await db
        .insertInto('credit_accounts')
        .values({ workspace_id: a.workspaceId, period_start: a.periodStart, available: a.available })
        .onConflict((oc) => oc.column('workspace_id').doNothing())
        .execute();
      const stored = await lockAccount(a.workspaceId);
      if (!stored) throw new Error(`Credit account of workspace ${a.workspaceId} vanished while being opened`);
      return stored;
    },

    async reserveIfCovered(r, periodStart) {
      // One statement: the debit and the reservation row together, or neither.
      const result = await db
        .with('debit', (qb) =>
          qb
            .updateTable('credit_accounts')
            .set((eb) => ({ available: eb('available', '-', r.amount) }))
            .where('workspace_id', '=', r.workspaceId)
            .where('period_start', '=', periodStart)
            .where('available', '>=', r.amount)
            .returning('workspace_id'),
        )
        .insertInto('credit_reservations')
        .columns(['id', 'workspace_id', 'amount', 'consumed', 'refunded', 'status', 'reason', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('debit')
            .select((s) => [
              s.val(r.id).as('id'),
              'debit.workspace_id',
              s.val(r.amount).as('amount'),
              s.val(r.consumed).as('consumed'),
              s.val(r.refunded).as('refunded'),
              s.val(r.status).as('status'),
              s.val(r.reason).as('reason'),
              s.val(r.createdAt).as('created_at'),
            ]),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },

    async saveAccount(a) {
      await db
        .insertInto('credit_accounts')
        .values({ workspace_id: a.workspaceId, period_start: a.periodStart, available: a.available })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ period_start: a.periodStart, available: a.available }))
        .execute();
    },

    async insertReservation(r) {
      await db
        .insertInto('credit_reservations')
        .values({
          id: r.id,
          workspace_id: r.workspaceId,
          amount: r.amount,
          consumed: r.consumed,
          refunded: r.refunded,
          status: r.status,
          reason: r.reason,
          created_at: r.createdAt,
        })
        .execute();
    },

    async lockReservation(id) {
      const row = await db.selectFrom('credit_reservations').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      return row && toReservation(row);
    },

    async saveReservation(r) {
      await db
        .updateTable('credit_reservations')
        .set({ consumed: r.consumed, refunded: r.refunded, status: r.status })
        .where('id', '=', r.id)
        .execute();
    },

    async usage(workspaceId, since) {
      const row = await db
        .selectFrom('credit_reservations')
        .select((eb) => [
          eb.fn.coalesce(eb.fn.sum<string>(eb.case().when('status', '=', 'OPEN').then(eb.ref('amount').$castTo<number>()).else(0).end()), eb.lit(0)).as('open_amount'),
          eb.fn.coalesce(eb.fn.sum<string>(eb.case().when('status', '=', 'OPEN').then(eb('consumed', '+', eb.ref('refunded'))).else(0).end()), eb.lit(0)).as('open_used'),
          eb.fn.coalesce(eb.fn.sum<string>(eb.case().when('created_at', '>=', since).then(eb.ref('consumed')).else(0).end()), eb.lit(0)).as('consumed'),
        ])
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirstOrThrow();
      return { reserved: Number(row.open_amount) - Number(row.open_used), consumed: Number(row.consumed) };
    },
  };
}

function toReservation(row: {
  id: string;
  workspace_id: string;
  amount: number;
  consumed: number;
  refunded: number;
  status: string;
  reason: string;
  created_at: Date;
}): Reservation {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    amount: row.amount,
    consumed: row.consumed,
    refunded: row.refunded,
    status: row.status as ReservationStatus,
    reason: row.reason,
    createdAt: row.created_at,
  };
}
