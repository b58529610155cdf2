import { sql, type Kysely, type Selectable } from 'kysely';
import { camelCased, snakeCased, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { ApiChannelMessage, ApiChannelPorts, ApiChannelStore } from '../../../core/helpdesk/api-channel/inbound.ts';
import type { Inbox } from '../../../core/helpdesk/inboxes/inboxes.ts';
import { helpdeskDb, type HelpdeskApiMessagesTable } from '../tables.ts';
import { contactStore, inboxStore } from '../inboxes/inbox-and-contact-stores.ts';

function toApiMessage(row: Selectable<HelpdeskApiMessagesTable>): ApiChannelMessage {
  const { delivery_state, attempts, ...message } = row;
  return { ...camelCased(message), delivery: delivery_state === null ? null : { state: delivery_state, attempts: Number(attempts) } };
}

/** The API channel's rows (migrations/0005_api_channel.ts), bound to one connection or transaction. */
export function apiChannelStore(base: Kysely<Database>): ApiChannelStore {
  const db = helpdeskDb(base);
  const outgoing = () => db.selectFrom('helpdesk_api_messages').selectAll().where('direction', '=', 'outgoing');
  return {
    async serialize(key) {
      await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(base);
    },
    async insert({ delivery, ...message }) {
      await db
        .insertInto('helpdesk_api_messages')
        .values({ ...snakeCased(message), delivery_state: delivery?.state ?? null, attempts: delivery?.attempts ?? 0 })
        .execute();
    },
    async update(m) {
      await db
        .updateTable('helpdesk_api_messages')
        .set({ source_id: m.sourceId, delivery_state: m.delivery?.state ?? null, attempts: m.delivery?.attempts ?? 0, last_outcome: m.lastOutcome, updated_at: m.updatedAt })
        .where('message_id', '=', m.messageId)
        .execute();
    },
    async lockOutgoing(messageId) {
      if (!isUuid(messageId)) return undefined;
      const row = await outgoing().where('message_id', '=', messageId).forUpdate().executeTakeFirst();
      return row && toApiMessage(row);
    },
    async findIncoming(inboxId, sourceId) {
      const row = await db
        .selectFrom('helpdesk_api_messages')
        .selectAll()
        .where('inbox_id', '=', inboxId)
        .where('direction', '=', 'incoming')
        .where('source_id', '=', sourceId)
        .executeTakeFirst();
      return row && toApiMessage(row);
    },
    async findOutgoing(inboxId, id) {
      // The app's own id first; the reply's id (what the app was sent as data.sourceId) otherwise.
      const byApp = await outgoing().where('inbox_id', '=', inboxId).where('source_id', '=', id).forUpdate().executeTakeFirst();
      if (byApp) return toApiMessage(byApp);
      if (!isUuid(id)) return undefined;
      const byOwn = await outgoing().where('inbox_id', '=', inboxId).where('message_id', '=', id).forUpdate().executeTakeFirst();
      return byOwn && toApiMessage(byOwn);
    },
    async contactByEmail(workspaceId, email) {
      // The oldest contact with the address, if several were made by hand.
      const row = await db
        .selectFrom('helpdesk_contacts')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where(sql<string>`lower(email)`, '=', email.toLowerCase())
        .orderBy('created_at')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      return row && contactStore(base).get(workspaceId, row.id);
    },
    async identifierOf(inboxId, contactId) {
      const row = await db.selectFrom('helpdesk_api_contacts').select('identifier').where('inbox_id', '=', inboxId).where('contact_id', '=', contactId).executeTakeFirst();
      return row?.identifier;
    },
    async rememberIdentifier(inboxId, contactId, identifier, at) {
      await db
        .insertInto('helpdesk_api_contacts')
        .values({ inbox_id: inboxId, contact_id: contactId, identifier, updated_at: at })
        .onConflict((oc) => oc.columns(['inbox_id', 'contact_id']).doUpdateSet({ identifier, updated_at: at }))
        .execute();
    },
  };
}

/** The API channel's ports in one transaction: its store and the outbox of the same transaction. */
export function apiChannelPorts(base: Kysely<Database>, ctx: Pick<PluginContext, 'queue'>): ApiChannelPorts {
  return { apiChannel: apiChannelStore(base), outbox: ctx.queue.outbox(base) };
}

/** The API inboxes as the inbound endpoint finds them: by id alone (it names no workspace). */
export function apiChannelInboxes(base: Kysely<Database>, ctx: Pick<PluginContext, 'box'>) {
  return {
    /** Undefined when unknown. */
    async byId(id: string): Promise<Inbox | undefined> {
      if (!isUuid(id)) return undefined;
      const row = await helpdeskDb(base).selectFrom('helpdesk_inboxes').select('workspace_id').where('id', '=', id).executeTakeFirst();
      return row && inboxStore(base, ctx.box).get(row.workspace_id, id);
    },
  };
}
