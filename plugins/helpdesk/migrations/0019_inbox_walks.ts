import { sql, type Kysely } from 'kysely';

/**
 * The list of a member limited to some inboxes (an Agent), or of one inbox, walks each inbox's
 * order per status and merges the walks (plugins/helpdesk/conversations/list-store.ts): walking
 * the workspace's order instead reads every other inbox's conversations before theirs. Migration
 * 0016 gave the last-activity order per inbox; these are the other sorts'. Frozen: never import
 * app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ordered = async (name: string, columns: string) => sql`create index ${sql.raw(name)} on helpdesk_conversations (${sql.raw(columns)})`.execute(db);
  await ordered('helpdesk_conversations_inbox_created_idx', 'inbox_id, status, created_at, id');
  await ordered('helpdesk_conversations_inbox_priority_idx', 'inbox_id, status, priority_rank, last_activity_at, id');
  await ordered('helpdesk_conversations_inbox_waiting_idx', 'inbox_id, status, waiting_since, id');
}
