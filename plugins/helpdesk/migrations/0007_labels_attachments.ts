import { sql, type Kysely } from 'kysely';
import { workspaceRecord, createdAt, timestamps, belongsTo, refersTo } from '../../kernel/table-columns.ts';
import { indexBy, indexInOrder } from '../../kernel/table-indexes.ts';

/**
 * Labels as a workspace resource, and files on helpdesk messages (issue 6; spec 2.12, 4.5, 6.5).
 * Frozen: never import app code here.
 *
 * Labels: unique per workspace on `name_key` (the name trimmed and lower-cased). Conversations
 * keep their labels by name; the labels already on conversations become labels of their
 * workspace (first spelling met wins) and conversations are respelt to match, so a rename can
 * follow the exact name.
 *
 * Attachments: bytes live either here (an upload to a conversation) or in a connection media
 * item (`media_id`; received media, media uploaded through the connection API, an upload sent
 * as a reply). Deleting a message or a conversation deletes its attachments.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_labels')
    .$call(workspaceRecord)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('color', 'text')
    .addColumn('description', 'text')
    .$call(timestamps)
    .addUniqueConstraint('helpdesk_labels_name_key', ['workspace_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('helpdesk_attachments')
    .$call(workspaceRecord)
    .$call(belongsTo('conversation_id', 'helpdesk_conversations'))
    .addColumn('message_id', 'uuid', (c) => c.references('helpdesk_messages.id').onDelete('cascade'))
    .$call(refersTo('media_id', 'media'))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer')
    .addColumn('bytes', 'bytea')
    .$call(refersTo('uploaded_by', 'users'))
    .$call(createdAt)
    .execute();
  await indexInOrder(db, 'helpdesk_attachments', 'message');
  await indexBy(db, 'helpdesk_attachments', 'conversation');

  // The labels already on conversations become the workspace's labels.
  const rows = await db
    .selectFrom('helpdesk_conversations')
    .select(['id', 'workspace_id', 'labels'])
    .where(sql<boolean>`cardinality(labels) > 0`)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const spelling = new Map<string, string>();
  const now = new Date();
  for (const row of rows) {
    const respelt: string[] = [];
    for (const raw of row.labels as string[]) {
      const name = raw.trim();
      const key = `${row.workspace_id}\u0000${name.toLowerCase()}`;
      if (!spelling.has(key)) {
        spelling.set(key, name);
        await db
          .insertInto('helpdesk_labels')
          .values({ id: crypto.randomUUID(), workspace_id: row.workspace_id, name, name_key: name.toLowerCase(), color: null, description: null, created_at: now, updated_at: now })
          .execute();
      }
      const stored = spelling.get(key)!;
      if (!respelt.includes(stored)) respelt.push(stored);
    }
    await db.updateTable('helpdesk_conversations').set({ labels: respelt }).where('id', '=', row.id).execute();
  }
}
