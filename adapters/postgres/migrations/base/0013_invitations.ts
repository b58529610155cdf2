import { sql, type Kysely } from 'kysely';
import { workspaceRecord, timestamps, refersTo } from '../../../../plugins/kernel/table-columns.ts';

/**
 * Invitations to join a workspace (issue 19, section 3). Only the SHA-256 of an invitation's
 * token is kept. At most one invitation per workspace and email is pending at a time.
 * `users.email_verified_at` is set when someone accepts an invitation that was mailed to the
 * address: the only proof that they read that mailbox. Frozen: never import app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_verified_at', 'timestamptz').execute();

  await db.schema
    .createTable('invitations')
    .$call(workspaceRecord)
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('roles', sql`text[]`, (c) => c.notNull().check(sql`cardinality(roles) > 0`))
    .$call(refersTo('invited_by', 'users'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('delivered_by', 'text', (c) => c.notNull().check(sql`delivered_by in ('mail', 'link')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('PENDING', 'ACCEPTED', 'DECLINED', 'REVOKED', 'EXPIRED')`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .$call(refersTo('accepted_by', 'users'))
    .$call(timestamps)
    .execute();
  await sql`create unique index invitations_pending_idx on invitations (workspace_id, email) where status = 'PENDING'`.execute(db);
}
