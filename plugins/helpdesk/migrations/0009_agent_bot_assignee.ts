import type { Kysely } from 'kysely';

/**
 * A conversation may be held by an agent bot instead of a person (issue 7: "takes the
 * conversation first, hands over to humans"). The bots' table comes later (0011); the column's
 * foreign key is added there. Frozen: never import app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('helpdesk_conversations').addColumn('assignee_agent_bot_id', 'uuid').execute();
}
