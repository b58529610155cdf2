import { sql, type Kysely, type Selectable } from 'kysely';
import { camelCased, containing, findInWorkspace, insertedIfAbsent, lockInWorkspace, pageOfRows, snakeCased, uniqueViolationAs, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { duplicateLabel, type Label, type LabelStore, type LabelStores } from '../../../core/helpdesk/labels/labels-catalogue.ts';
import { labelKey } from '../../../core/helpdesk/labels/label-sets.ts';
import { helpdeskDb, type HelpdeskLabelsTable } from '../tables.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';

function toLabel(row: Selectable<HelpdeskLabelsTable>): Label {
  const { name_key: _key, ...label } = row;
  return camelCased(label);
}

/** The ports of the label use cases (core/helpdesk/labels/labels-catalogue.ts) on a handle. */
export function labelStores(db: Kysely<Database>, ctx: PluginContext): LabelStores {
  return { labels: labelStore(db), plans: workspacePlans(db), events: helpdeskEventLog(db, ctx) };
}

/**
 * The workspace's labels. Names are compared through `name_key`, computed here with the same
 * `labelKey` as the domain (not the database's `lower()`, whose folding depends on its locale).
 */
export function labelStore(base: Kysely<Database>): LabelStore {
  const db = helpdeskDb(base);
  const values = (l: Label) => ({ ...snakeCased(l), name_key: labelKey(l.name) });
  const rethrow = uniqueViolationAs('helpdesk_labels_name_key', duplicateLabel);
  return {
    async list(workspaceId, request) {
      let query = db.selectFrom('helpdesk_labels').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('name_key', 'like', containing(labelKey(request.search)));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('name_key').orderBy('id'), toLabel);
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_labels', workspaceId, id, toLabel);
    },
    async lock(workspaceId, id) {
      return lockInWorkspace(db, 'helpdesk_labels', workspaceId, id, toLabel);
    },
    async findByNames(workspaceId, names) {
      if (names.length === 0) return [];
      // Shared locks: a rename or delete of these labels waits for this transaction, so a
      // conversation never keeps a name its label just lost.
      const rows = await db.selectFrom('helpdesk_labels').selectAll().where('workspace_id', '=', workspaceId).where('name_key', 'in', [...new Set(names.map(labelKey))]).forShare().execute();
      return rows.map(toLabel);
    },
    async insert(label) {
      await db.insertInto('helpdesk_labels').values(values(label)).execute().catch(rethrow);
    },
    async insertIfAbsent(label) {
      return insertedIfAbsent(db.insertInto('helpdesk_labels').values(values(label)).onConflict((oc) => oc.constraint('helpdesk_labels_name_key').doNothing()));
    },
    async update(label) {
      await db
        .updateTable('helpdesk_labels')
        .set({ name: label.name, name_key: labelKey(label.name), color: label.color, description: label.description, updated_at: label.updatedAt })
        .where('id', '=', label.id)
        .execute()
        .catch(rethrow);
    },
    async delete(id) {
      await db.deleteFrom('helpdesk_labels').where('id', '=', id).execute();
    },
    async renameOnConversations(workspaceId, from, to) {
      await db
        .updateTable('helpdesk_conversations')
        .set({ labels: sql`array_replace(labels, ${from}::text, ${to}::text)` })
        .where('workspace_id', '=', workspaceId)
        .where(sql<boolean>`labels @> array[${from}::text]`)
        .execute();
    },
    async removeFromConversations(workspaceId, name) {
      await db
        .updateTable('helpdesk_conversations')
        .set({ labels: sql`array_remove(labels, ${name}::text)` })
        .where('workspace_id', '=', workspaceId)
        .where(sql<boolean>`labels @> array[${name}::text]`)
        .execute();
    },
  };
}
