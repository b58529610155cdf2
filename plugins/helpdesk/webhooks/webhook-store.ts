import type { Kysely, Selectable } from 'kysely';
import { camelCased, containing, findInWorkspace, pageOfRows, type Database } from '../../kernel/storage.ts';
import type { SecretBox } from '../../kernel/security.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { HelpdeskEventType } from '../../../core/helpdesk/events.ts';
import type { HelpdeskWebhook, HelpdeskWebhookStore } from '../../../core/helpdesk/webhooks/helpdesk-webhooks.ts';
import { helpdeskDb, type HelpdeskWebhooksTable } from '../tables.ts';

/** Helpdesk webhooks; the signing secret is sealed at rest (the delivery engine needs it back). */
export function helpdeskWebhookStore(base: Kysely<Database>, box: SecretBox): HelpdeskWebhookStore {
  const db = helpdeskDb(base);
  const toWebhook = (row: Selectable<HelpdeskWebhooksTable>): HelpdeskWebhook => ({
    ...camelCased(row),
    subscriptions: row.subscriptions as HelpdeskEventType[],
    signingSecret: box.open(row.signing_secret),
  });
  const columns = (w: HelpdeskWebhook) => ({
    url: w.url,
    subscriptions: w.subscriptions,
    inbox_id: w.inboxId,
    signing_secret: box.seal(w.signingSecret),
    secret_chosen: w.secretChosen,
    updated_at: w.updatedAt,
  });
  return {
    async insert(w) {
      await db.insertInto('helpdesk_webhooks').values({ id: w.id, workspace_id: w.workspaceId, created_at: w.createdAt, ...columns(w) }).execute();
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_webhooks', workspaceId, id, toWebhook);
    },
    async list(workspaceId, request) {
      let query = db.selectFrom('helpdesk_webhooks').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('url', 'ilike', containing(request.search));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at').orderBy('id'), toWebhook);
    },
    async update(w) {
      await db.updateTable('helpdesk_webhooks').set(columns(w)).where('id', '=', w.id).execute();
    },
    async delete(id) {
      // The trigger of migrations/0003 drops the delivery history with it.
      await db.deleteFrom('helpdesk_webhooks').where('id', '=', id).execute();
    },
    async subscribedTo(workspaceId, event, inboxId) {
      const rows = await db
        .selectFrom('helpdesk_webhooks')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb(eb.val<string>(event), '=', eb.fn.any('subscriptions')))
        .where((eb) => (inboxId === null ? eb('inbox_id', 'is', null) : eb.or([eb('inbox_id', 'is', null), eb('inbox_id', '=', inboxId)])))
        .execute();
      return rows.map(toWebhook);
    },
  };
}

/** One helpdesk webhook by id, any workspace (the delivery engine knows only the id). */
export async function findHelpdeskWebhook(base: Kysely<Database>, box: SecretBox, id: string): Promise<HelpdeskWebhook | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await helpdeskDb(base).selectFrom('helpdesk_webhooks').select('workspace_id').where('id', '=', id).executeTakeFirst();
  return row ? helpdeskWebhookStore(base, box).get(row.workspace_id, id) : undefined;
}
