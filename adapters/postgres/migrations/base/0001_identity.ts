import { sql, type Kysely } from 'kysely';
import { uuidKey, ownedByWorkspace, workspaceRecord, createdNow, belongsTo } from '../../../../plugins/kernel/table-columns.ts';
import { indexBy } from '../../../../plugins/kernel/table-indexes.ts';

/** Users, workspaces, memberships, API tokens. Frozen: never import app code here. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .$call(uuidKey)
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .$call(createdNow)
    .execute();

  await db.schema
    .createTable('workspaces')
    .$call(uuidKey)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_personal', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('helpdesk_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('plan', 'text', (c) => c.notNull().defaultTo('FREE'))
    .$call(createdNow)
    .execute();

  await db.schema
    .createTable('memberships')
    .$call(ownedByWorkspace)
    .$call(belongsTo('user_id', 'users'))
    .addColumn('roles', sql`text[]`, (c) => c.notNull().check(sql`cardinality(roles) > 0`))
    .$call(createdNow)
    .addPrimaryKeyConstraint('memberships_pkey', ['workspace_id', 'user_id'])
    .execute();
  await indexBy(db, 'memberships', 'user');

  await db.schema
    .createTable('api_tokens')
    .$call(workspaceRecord)
    .$call(belongsTo('user_id', 'users'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_last4', 'text', (c) => c.notNull())
    .$call(createdNow)
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await indexBy(db, 'api_tokens', 'workspace');
}
