import { sql, type Kysely, type Selectable } from 'kysely';
import type { CreditAccount, CreditStore, Reservation, ReservationStatus } from '../../../core/plans/index.ts';
import type { PlanName } from '../../../core/plans/plans.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import type { CreditReservationsTable, Database } from '../schema.ts';
import { anyOf } from '../any-of.ts';
import { compiledOnce } from '../compiled-once.ts';
import { findRow } from '../keyed-row.ts';
import { putRow } from '../row-writes.ts';

export function creditStore(db: Kysely<Database>): CreditStore {
  async function lockAccount(workspaceId: string) {
    const row = (await lockAccountRow(db, workspaceId)).rows[0];
    return row && { ...camelCased(row), allowance: row.allowance ?? undefined };
  }

  async function lockReservations(ids: readonly string[]) {
    if (ids.length === 0) return [];
    const { rows } = await lockReservationRows(db, [...ids]);
    return rows.map(toReservation);
  }

  async function saveReservations(reservations: readonly Reservation[]) {
    if (reservations.length === 0) return;
    // One write for the batch: each reservation's counts and status joined from arrays.
    await saveReservationRows(
      db,
      reservations.map((r) => r.id),
      reservations.map((r) => r.consumed),
      reservations.map((r) => r.refunded),
      reservations.map((r) => r.status),
    );
  }

  return {
    lockAccount,

    async createAccount(a) {
      // A concurrent opener's row wins (this insert waits for it); then lock whichever row is stored.
      await db
        .insertInto('credit_accounts')
        .values(accountRow(a))
        .onConflict((oc) => oc.column('workspace_id').doNothing())
        .execute();
      const stored = await lockAccount(a.workspaceId);
      if (!stored) throw new Error(`Credit account of workspace ${a.workspaceId} vanished while being opened`);
      return stored;
    },

    async reserveIfCovered(r, periodStart) {
      const result = await reserveIfCovered(db, r.workspaceId, r.amount, periodStart, r.id, r.status, r.reason, r.createdAt);
      return Number(result.numAffectedRows ?? 0n) === 1;
    },

    async saveAccount(a) {
      await putRow(db, 'credit_accounts', ['workspace_id'], accountRow(a));
    },

    async insertReservation(r) {
      await db.insertInto('credit_reservations').values(snakeCased(r)).execute();
    },

    async findReservation(id) {
      return findRow(db, 'credit_reservations', { id }, toReservation);
    },

    async lockReservation(id) {
      return (await lockReservations([id]))[0];
    },

    lockReservations,

    async saveReservation(r) {
      await saveReservations([r]);
    },

    saveReservations,

    async accountsOffQuota(periodStart, quotas) {
      const rows = await db
        .selectFrom('credit_accounts')
        .innerJoin('workspaces', 'workspaces.id', 'credit_accounts.workspace_id')
        .select(['credit_accounts.workspace_id as workspaceId', 'workspaces.plan as plan'])
        .where('credit_accounts.period_start', '=', periodStart)
        .where((eb) =>
          eb.or(
            Object.entries(quotas).map(([plan, quota]) =>
              eb.and([eb('workspaces.plan', '=', plan), eb.or([eb('credit_accounts.allowance', 'is', null), eb('credit_accounts.allowance', '<>', quota)])]),
            ),
          ),
        )
        .orderBy('credit_accounts.workspace_id')
        .execute();
      return rows.map((r) => ({ workspaceId: r.workspaceId, plan: r.plan as PlanName }));
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

/**
 * The fast path of every send, in one statement compiled once: the debit and the reservation
 * row together, or neither (the insert selects from the debit, which matches no row when the
 * account does not cover the amount or is in another period).
 */
const reserveIfCovered = compiledOnce(
  (db: Kysely<Database>, workspaceId: string, amount: number, periodStart: Date, id: string, status: string, reason: string, createdAt: Date) =>
    db
      .with('debit', (qb) =>
        qb
          .updateTable('credit_accounts')
          .set((eb) => ({ available: eb('available', '-', amount) }))
          .where('workspace_id', '=', workspaceId)
          .where('period_start', '=', periodStart)
          .where('available', '>=', amount)
          .returning('workspace_id'),
      )
      .insertInto('credit_reservations')
      .columns(['id', 'workspace_id', 'amount', 'consumed', 'refunded', 'status', 'reason', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('debit')
          .select((s) => [
            s.val(id).as('id'),
            'debit.workspace_id',
            s.val(amount).as('amount'),
            s.lit(0).as('consumed'),
            s.lit(0).as('refunded'),
            s.val(status).as('status'),
            s.val(reason).as('reason'),
            s.val(createdAt).as('created_at'),
          ]),
      ),
);

const lockAccountRow = compiledOnce((db: Kysely<Database>, workspaceId: string) =>
  db.selectFrom('credit_accounts').selectAll().where('workspace_id', '=', workspaceId).forUpdate(),
);

/** In id order: two batches locking the same reservations wait for each other, never deadlock. */
const lockReservationRows = compiledOnce((db: Kysely<Database>, ids: string[]) =>
  db
    .selectFrom('credit_reservations')
    .selectAll()
    .where('id', '=', anyOf(ids, 'uuid'))
    .orderBy('id')
    .forUpdate(),
);

const saveReservationRows = compiledOnce((db: Kysely<Database>, ids: string[], consumed: number[], refunded: number[], statuses: string[]) =>
  db
    .updateTable('credit_reservations')
    .from(
      sql<{ id: string; consumed: number; refunded: number; status: string }>`unnest(${ids}::uuid[], ${consumed}::int[], ${refunded}::int[], ${statuses}::text[])`.as<'saved'>(
        sql`saved(id, consumed, refunded, status)`,
      ),
    )
    .set((eb) => ({ consumed: eb.ref('saved.consumed'), refunded: eb.ref('saved.refunded'), status: eb.ref('saved.status') }))
    .whereRef('credit_reservations.id', '=', 'saved.id'),
);

/** An account without a recorded allowance (`undefined`) is stored with none (null). */
function accountRow(a: CreditAccount) {
  return { ...snakeCased(a), allowance: a.allowance ?? null };
}

function toReservation(row: Selectable<CreditReservationsTable>): Reservation {
  return { ...camelCased(row), status: row.status as ReservationStatus };
}
