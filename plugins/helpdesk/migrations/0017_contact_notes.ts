import { sql, type Kysely } from 'kysely';
import { belongsTo, createdAt, refersTo, workspaceRecord } from '../../kernel/table-columns.ts';

/**
 * Notes on a contact (the console's contact panel), deleted with the contact; the author is kept
 * as a name only while the user exists. Contacts are looked up by e-mail when a CSV is imported
 * (phone first, then e-mail). Frozen: never import app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_contact_notes')
    .$call(workspaceRecord)
    .$call(belongsTo('contact_id', 'helpdesk_contacts'))
    .addColumn('content', 'text', (c) => c.notNull())
    .$call(refersTo('author_user_id', 'users'))
    .$call(createdAt)
    .execute();
  await db.schema.createIndex('helpdesk_contact_notes_contact_idx').on('helpdesk_contact_notes').columns(['contact_id', 'created_at', 'id']).execute();
  await sql`create index helpdesk_contacts_email_idx on helpdesk_contacts (workspace_id, email) where email is not null`.execute(db);
}
