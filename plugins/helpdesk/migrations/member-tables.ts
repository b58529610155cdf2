import type { Kysely } from 'kysely';
import { belongsTo, createdAt } from '../../kernel/table-columns.ts';
import { indexBy } from '../../kernel/table-indexes.ts';

/**
 * The members of a group (an inbox's, a team's): one row per group and user, gone with either,
 * found by user too. Frozen with the migrations that call it.
 */
export async function createMemberTable(db: Kysely<any>, table: string, group: { column: string; table: string }): Promise<void> {
  await db.schema
    .createTable(table)
    .$call(belongsTo(group.column, group.table))
    .$call(belongsTo('user_id', 'users'))
    .$call(createdAt)
    .addPrimaryKeyConstraint(`${table}_pkey`, [group.column, 'user_id'])
    .execute();
  await indexBy(db, table, 'user');
}
