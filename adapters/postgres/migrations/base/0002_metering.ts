import { sql, type Kysely } from 'kysely';
import { workspaceRecord, createdAt, createdNow, onePer } from '../../../../plugins/kernel/table-columns.ts';
import { indexBy } from '../../../../plugins/kernel/table-indexes.ts';

/** Credit ledger and the connections a plan counts. The checks back up the core invariants. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('credit_accounts')
    .$call(onePer('workspace_id', 'workspaces'))
    .addColumn('period_start', 'timestamptz', (c) => c.notNull())
    .addColumn('available', 'integer', (c) => c.notNull().check(sql`available >= 0`))
    .execute();

  await db.schema
    .createTable('credit_reservations')
    .$call(workspaceRecord)
    .addColumn('amount', 'integer', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('consumed', 'integer', (c) => c.notNull().defaultTo(0).check(sql`consumed >= 0`))
    .addColumn('refunded', 'integer', (c) => c.notNull().defaultTo(0).check(sql`refunded >= 0`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('OPEN', 'SETTLED')`))
    .addColumn('reason', 'text', (c) => c.notNull())
    .$call(createdAt)
    .addCheckConstraint('credit_reservations_balance', sql`consumed + refunded <= amount`)
    .addCheckConstraint('credit_reservations_settled', sql`status <> 'SETTLED' or consumed + refunded = amount`)
    .execute();
  await db.schema.createIndex('credit_reservations_open_idx').on('credit_reservations').columns(['workspace_id', 'status']).execute();

  await db.schema
    .createTable('connections')
    .$call(workspaceRecord)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .$call(createdNow)
    .execute();
  await indexBy(db, 'connections', 'workspace');
}
