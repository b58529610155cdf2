import { sql, type Kysely } from 'kysely';
import { ownedByWorkspace, workspaceRecord, timestamps, belongsTo, refersTo, onePer } from '../../kernel/table-columns.ts';
import { indexBy, indexInOrder } from '../../kernel/table-indexes.ts';

/**
 * Business hours, SLA policies, conversation timing, breaches, out-of-office replies
 * (core/helpdesk/sla/*.ts, inboxes/out-of-office.ts). Frozen: never import app code here.
 *
 * - `helpdesk_business_hours`: one row per inbox that was configured (no row: open 24/7, no
 *   out-of-office reply). `weekly_hours`: seven lists (Monday first) of `{ start, end }` in
 *   minutes of the local day; `holidays`: `[{ date, name }]`, local dates of the inbox's zone.
 * - `helpdesk_sla_policies` and `helpdesk_sla_policy_inboxes` (an inbox has at most one policy:
 *   the primary key).
 * - `helpdesk_conversation_timing`: one row per conversation the helpdesk has tracked (from its
 *   first event on), also what reports read:
 *     `first_reply_at`   first public reply by a person or a bot (not the helpdesk's own messages),
 *     `waiting_since`    the contact's earliest unanswered message (null once answered or resolved),
 *     `resolved_at`      the latest resolve (kept when reopened; the status says if it is resolved now),
 *     `reopened_at`      the latest reopen after a resolve,
 *     `policy_id`, `applied_at`  the SLA policy and when it was put on the conversation,
 *     `*_due_at`         due times of the running SLA rounds (null: not running).
 * - `helpdesk_sla_breaches`: one row per missed round, unique per (conversation, target, due
 *   time); `policy_id` has no foreign key (a deleted policy's breaches keep its id). Reports
 *   bucket them by `due_at` (when the promise was broken).
 * - `helpdesk_out_of_office_replies`: the claim of one out-of-office reply per conversation and
 *   closed period (named by when the inbox opens again).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_business_hours')
    .$call(onePer('inbox_id', 'helpdesk_inboxes'))
    .$call(ownedByWorkspace)
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('weekly_hours', 'jsonb', (c) => c.notNull().defaultTo(sql`'[[],[],[],[],[],[],[]]'::jsonb`))
    .addColumn('holidays', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('out_of_office_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('out_of_office_message', 'text', (c) => c.check(sql`char_length(out_of_office_message) between 1 and 1000`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('helpdesk_sla_policies')
    .$call(workspaceRecord)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('first_response_minutes', 'integer', (c) => c.check(sql`first_response_minutes > 0`))
    .addColumn('next_response_minutes', 'integer', (c) => c.check(sql`next_response_minutes > 0`))
    .addColumn('resolution_minutes', 'integer', (c) => c.check(sql`resolution_minutes > 0`))
    .addColumn('only_business_hours', 'boolean', (c) => c.notNull().defaultTo(true))
    .$call(timestamps)
    .execute();
  await sql`create unique index helpdesk_sla_policies_name_key on helpdesk_sla_policies (workspace_id, lower(name))`.execute(db);

  await db.schema
    .createTable('helpdesk_sla_policy_inboxes')
    .$call(onePer('inbox_id', 'helpdesk_inboxes'))
    .$call(belongsTo('policy_id', 'helpdesk_sla_policies'))
    .$call(ownedByWorkspace)
    .execute();
  await indexBy(db, 'helpdesk_sla_policy_inboxes', 'policy');

  await db.schema
    .createTable('helpdesk_conversation_timing')
    .$call(onePer('conversation_id', 'helpdesk_conversations'))
    .$call(ownedByWorkspace)
    .addColumn('inbox_id', 'uuid', (c) => c.notNull())
    .$call(refersTo('policy_id', 'helpdesk_sla_policies'))
    .addColumn('applied_at', 'timestamptz', (c) => c.notNull())
    .addColumn('first_reply_at', 'timestamptz')
    .addColumn('waiting_since', 'timestamptz')
    .addColumn('resolved_at', 'timestamptz')
    .addColumn('reopened_at', 'timestamptz')
    .addColumn('first_response_due_at', 'timestamptz')
    .addColumn('next_response_due_at', 'timestamptz')
    .addColumn('resolution_due_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('helpdesk_conversation_timing_workspace_idx').on('helpdesk_conversation_timing').columns(['workspace_id', 'inbox_id']).execute();
  await indexBy(db, 'helpdesk_conversation_timing', 'policy');
  // The deadline jobs' sweep looks for running rounds past due (core/helpdesk/sla/tracking.ts).
  for (const column of ['first_response_due_at', 'next_response_due_at', 'resolution_due_at']) {
    await sql`create index ${sql.raw(`helpdesk_conversation_timing_${column}_idx`)} on helpdesk_conversation_timing (${sql.ref(column)}) where ${sql.ref(column)} is not null`.execute(db);
  }

  await db.schema
    .createTable('helpdesk_sla_breaches')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .$call(belongsTo('conversation_id', 'helpdesk_conversations'))
    .$call(ownedByWorkspace)
    .addColumn('inbox_id', 'uuid', (c) => c.notNull())
    .addColumn('policy_id', 'uuid')
    .addColumn('target', 'text', (c) => c.notNull().check(sql`target in ('first_response', 'next_response', 'resolution')`))
    .addColumn('due_at', 'timestamptz', (c) => c.notNull())
    .addColumn('breached_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('helpdesk_sla_breaches_round_key', ['conversation_id', 'target', 'due_at'])
    .execute();
  await indexInOrder(db, 'helpdesk_sla_breaches', 'workspace', 'due_at');

  await db.schema
    .createTable('helpdesk_out_of_office_replies')
    .$call(belongsTo('conversation_id', 'helpdesk_conversations'))
    .addColumn('reopens_at', 'timestamptz', (c) => c.notNull())
    .$call(ownedByWorkspace)
    .$call(refersTo('message_id', 'helpdesk_messages'))
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('helpdesk_out_of_office_replies_pkey', ['conversation_id', 'reopens_at'])
    .execute();
}
