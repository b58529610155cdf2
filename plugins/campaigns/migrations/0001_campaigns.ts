import { sql, type Kysely } from 'kysely';
import { ownedByWorkspace, workspaceRecord, createdAt, timestamps, belongsTo, refersTo, jsonObject } from '../../kernel/table-columns.ts';
import { indexInOrder } from '../../kernel/table-indexes.ts';

/**
 * Campaigns, their recipients and the workspace's opt-out list (issue 8). Frozen: never import app
 * code here.
 *
 * `connection_id` has no foreign key on purpose: a deleted connection's campaigns must still be
 * found by it, to fail them and give their reserved credits back. A recipient's delivery status
 * is its message's (`message_id`, no foreign key either: messages go with their connection).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('campaigns')
    .$call(workspaceRecord)
    .addColumn('connection_id', 'uuid')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('message', 'jsonb', (c) => c.notNull())
    .addColumn('start_at', 'timestamptz')
    .addColumn('timezone', 'text')
    .addColumn('pace', 'jsonb', (c) => c.notNull())
    .addColumn('reservation_id', 'uuid')
    .addColumn('audience_size', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('status_reason', 'text')
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret', 'text')
    .addColumn('next_slot_at', 'timestamptz')
    .addColumn('tick', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_progress_at', 'timestamptz')
    .$call(refersTo('created_by', 'users'))
    .$call(timestamps)
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await indexInOrder(db, 'campaigns', 'workspace');
  await db.schema.createIndex('campaigns_connection_idx').on('campaigns').columns(['connection_id', 'status']).execute();

  await db.schema
    .createTable('campaign_recipients')
    .$call(belongsTo('campaign_id', 'campaigns'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .$call(jsonObject('variables'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('message_id', 'uuid')
    .addColumn('dispatched_at', 'timestamptz')
    .addColumn('replied_at', 'timestamptz')
    .addPrimaryKeyConstraint('campaign_recipients_pkey', ['campaign_id', 'position'])
    .execute();
  // The pacer takes queued recipients in order, and counts its sends of the last minute.
  await db.schema.createIndex('campaign_recipients_queued_idx').on('campaign_recipients').columns(['campaign_id', 'position']).where(sql.ref('status'), '=', 'QUEUED').execute();
  await db.schema.createIndex('campaign_recipients_dispatched_idx').on('campaign_recipients').columns(['campaign_id', 'dispatched_at']).where(sql.ref('status'), '=', 'DISPATCHED').execute();
  // A reply is matched to the number's latest campaign message.
  await db.schema.createIndex('campaign_recipients_phone_idx').on('campaign_recipients').columns(['phone', 'dispatched_at']).where(sql.ref('status'), '=', 'DISPATCHED').execute();

  await db.schema
    .createTable('campaign_opt_outs')
    .$call(ownedByWorkspace)
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .$call(createdAt)
    .addPrimaryKeyConstraint('campaign_opt_outs_pkey', ['workspace_id', 'phone'])
    .execute();
}
