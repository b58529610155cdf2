import { sql, type Kysely } from 'kysely';
import { ownedByWorkspace, belongsTo, refersTo, onePer } from '../../kernel/table-columns.ts';
import { indexInOrder } from '../../kernel/table-indexes.ts';

/**
 * Customer satisfaction surveys (core/helpdesk/csat/csat.ts). Frozen: never import app code here.
 *
 * - `helpdesk_csat_settings`: one row per inbox that was configured (no row: CSAT off);
 *   `message` null means the default invitation text.
 * - `helpdesk_csat_surveys`: one row per conversation that was sent its survey link. The primary
 *   key is the "once per conversation" guard: the worker claims the row before sending, so a
 *   retried job or a second resolve finds it and sends nothing. Who held the conversation when
 *   it was resolved is kept here and copied to the answer.
 * - `helpdesk_csat_responses`: the answer, at most one per conversation (primary key: of two
 *   submissions at once exactly one is stored); it names a survey that was sent. Read by reports.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_csat_settings')
    .$call(onePer('inbox_id', 'helpdesk_inboxes'))
    .$call(ownedByWorkspace)
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.check(sql`char_length(message) between 1 and 1000`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('helpdesk_csat_surveys')
    .$call(onePer('conversation_id', 'helpdesk_conversations'))
    .$call(ownedByWorkspace)
    .$call(belongsTo('inbox_id', 'helpdesk_inboxes'))
    .$call(refersTo('message_id', 'helpdesk_messages'))
    .$call(refersTo('assignee_user_id', 'users'))
    .$call(refersTo('team_id', 'helpdesk_teams'))
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('helpdesk_csat_responses')
    .$call(onePer('conversation_id', 'helpdesk_csat_surveys', 'conversation_id'))
    .$call(ownedByWorkspace)
    .$call(belongsTo('inbox_id', 'helpdesk_inboxes'))
    .addColumn('rating', 'smallint', (c) => c.notNull().check(sql`rating between 1 and 5`))
    .addColumn('comment', 'text', (c) => c.check(sql`char_length(comment) between 1 and 1000`))
    .$call(refersTo('assignee_user_id', 'users'))
    .$call(refersTo('team_id', 'helpdesk_teams'))
    .addColumn('submitted_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await indexInOrder(db, 'helpdesk_csat_responses', 'workspace', 'submitted_at');
  await indexInOrder(db, 'helpdesk_csat_responses', 'inbox', 'submitted_at');
}
