import { sql, type Kysely } from 'kysely';
import { ownedByWorkspace, timestamps, belongsTo, onePer } from '../../kernel/table-columns.ts';

/**
 * The API channel (spec 2.10, 4.5, 5.6, 6.6). Frozen: never import app code here.
 *
 * `helpdesk_api_messages`: one row per helpdesk message that travelled through an API inbox.
 * - incoming: `source_id` is the customer app's id of the message; unique per inbox, so a
 *   replayed push stores nothing twice.
 * - outgoing: the reply's delivery to `channelConfig.webhookUrl` (state and attempts, as a
 *   webhook delivery), the recipient named in the POST, and the app's own id for the message
 *   (`source_id`, from the answer `{ sourceId }`), by which later status updates refer to it.
 *   Unique per inbox as well, so a status update names one message.
 *
 * `helpdesk_api_contacts`: the identifier the customer app uses for a contact of the inbox
 * (`recipientIdentifier` of outgoing messages).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_api_messages')
    .$call(onePer('message_id', 'helpdesk_messages'))
    .$call(belongsTo('inbox_id', 'helpdesk_inboxes'))
    .$call(ownedByWorkspace)
    .$call(belongsTo('conversation_id', 'helpdesk_conversations'))
    .addColumn('direction', 'text', (c) => c.notNull().check(sql`direction in ('incoming', 'outgoing')`))
    .addColumn('source_id', 'text')
    .addColumn('recipient_identifier', 'text')
    .addColumn('delivery_state', 'text', (c) => c.check(sql`delivery_state in ('PENDING', 'RETRYING', 'SUCCEEDED', 'FAILED')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_outcome', 'text')
    .$call(timestamps)
    .execute();
  // NULLs (a reply whose app answered no id yet) do not collide.
  await db.schema.createIndex('helpdesk_api_messages_source_key').on('helpdesk_api_messages').columns(['inbox_id', 'direction', 'source_id']).unique().execute();

  await db.schema
    .createTable('helpdesk_api_contacts')
    .$call(belongsTo('inbox_id', 'helpdesk_inboxes'))
    .$call(belongsTo('contact_id', 'helpdesk_contacts'))
    .addColumn('identifier', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('helpdesk_api_contacts_pkey', ['inbox_id', 'contact_id'])
    .execute();
}
