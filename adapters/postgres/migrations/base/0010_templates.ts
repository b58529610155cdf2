import { sql, type Kysely } from 'kysely';
import { workspaceRecord, timestamps, belongsTo } from '../../../../plugins/kernel/table-columns.ts';

/**
 * Message templates of official connections (spec 3.5, 4.3): what was submitted, the platform's
 * id and the approval status as last learned (by polling or by the status callback).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('templates')
    .$call(workspaceRecord)
    .$call(belongsTo('connection_id', 'connections'))
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('components', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('rejected_reason', 'text')
    .$call(timestamps)
    .addUniqueConstraint('templates_name_language_key', ['connection_id', 'name', 'language'])
    .execute();
  await db.schema.createIndex('templates_external_idx').on('templates').columns(['connection_id', 'external_id']).execute();
  await sql`create index templates_recent_idx on templates (connection_id, created_at desc, id desc)`.execute(db);
}
