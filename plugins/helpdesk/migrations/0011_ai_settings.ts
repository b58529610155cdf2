import { sql, type Kysely } from 'kysely';
import { onePer } from '../../kernel/table-columns.ts';

/**
 * The workspace's AI provider (core/helpdesk/ai/ai-settings.ts): one row per workspace that saved
 * settings (no row: not configured). The API key is sealed with the service's secret box.
 * Frozen: never import app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_ai_settings')
    .$call(onePer('workspace_id', 'workspaces'))
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('base_url', 'text')
    .addColumn('model', 'text', (c) => c.check(sql`char_length(model) between 1 and 200`))
    .addColumn('api_key', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
}
