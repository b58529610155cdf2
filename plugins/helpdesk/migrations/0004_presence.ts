import { sql, type Kysely } from 'kysely';
import { ownedByWorkspace, belongsTo } from '../../kernel/table-columns.ts';

/**
 * Agent presence (spec 3.7), shared by every server process: the availability each member chose,
 * the time of their last connection or heartbeat, and the status last announced to the workspace
 * (`presence.update`). A process announces a change only by moving `announced` with a
 * compare-and-set, so with several processes each change is announced once. Frozen: never
 * import app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const availability = (column: string) => sql`${sql.ref(column)} in ('online', 'busy', 'offline')`;
  await db.schema
    .createTable('helpdesk_presence')
    .$call(ownedByWorkspace)
    .$call(belongsTo('user_id', 'users'))
    .addColumn('availability', 'text', (c) => c.notNull().defaultTo('online').check(availability('availability')))
    .addColumn('last_seen_at', 'timestamptz')
    .addColumn('announced', 'text', (c) => c.notNull().defaultTo('offline').check(availability('announced')))
    .addPrimaryKeyConstraint('helpdesk_presence_pkey', ['workspace_id', 'user_id'])
    .execute();
  // The periodic sweep reads only the members shown online or busy.
  await db.schema
    .createIndex('helpdesk_presence_announced_idx')
    .on('helpdesk_presence')
    .column('workspace_id')
    .where(sql<boolean>`announced <> 'offline'`)
    .execute();
}
