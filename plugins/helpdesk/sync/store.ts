import { sql, type Kysely, type Selectable } from 'kysely';
import { camelCased, lockInWorkspace, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUniqueViolation } from '../../kernel/storage.ts';
import type { Outbox } from '../../../core/shared/outbox.ts';
import { INBOX_SYNC_QUEUE, syncRunning, type InboxSync, type InboxSyncStore, type InboxSyncStores } from '../../../core/helpdesk/inboxes/inbox-sync.ts';
import type { HistoryMessage } from '../../../core/helpdesk/inboxes/history-import.ts';
import { conversationStore, helpdeskMessageStore } from '../conversations/store.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { helpdeskDb, type HelpdeskInboxSyncsTable } from '../tables.ts';
import { contactStore, inboxStore, workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { chatMessageText } from './chat-text.ts';

/** One-to-one chats only: groups (`@g.us`), broadcasts, newsletters and LIDs are not contacts' conversations. */
const ONE_TO_ONE = '%@s.whatsapp.net';

function toSync(row: Selectable<HelpdeskInboxSyncsTable>): InboxSync {
  const { contacts_total, contacts_processed, contacts_created, conversations_total, conversations_processed, conversations_created, ...sync } = row;
  return {
    ...camelCased(sync),
    contacts: { total: Number(contacts_total), processed: Number(contacts_processed), created: Number(contacts_created) },
    conversations: { total: Number(conversations_total), processed: Number(conversations_processed), created: Number(conversations_created) },
    messagesImported: Number(row.messages_imported),
    chatsPerPage: Number(row.chats_per_page),
  };
}

function toRow(s: InboxSync) {
  return {
    status: s.status,
    cursor: s.cursor,
    contacts_total: s.contacts.total,
    contacts_processed: s.contacts.processed,
    contacts_created: s.contacts.created,
    conversations_total: s.conversations.total,
    conversations_processed: s.conversations.processed,
    conversations_created: s.conversations.created,
    messages_imported: s.messagesImported,
    error: s.error,
    finished_at: s.finishedAt,
    updated_at: s.updatedAt,
  };
}

export function inboxSyncStore(base: Kysely<Database>): InboxSyncStore {
  const db = helpdeskDb(base);
  return {
    async insert(s) {
      try {
        await db
          .insertInto('helpdesk_inbox_syncs')
          .values({ ...toRow(s), id: s.id, workspace_id: s.workspaceId, inbox_id: s.inboxId, connection_id: s.connectionId, chats_per_page: s.chatsPerPage, started_at: s.startedAt })
          .execute();
      } catch (error) {
        if (isUniqueViolation(error, 'helpdesk_inbox_syncs_running_key')) throw syncRunning();
        throw error;
      }
    },
    async latest(workspaceId, inboxId) {
      const row = await db
        .selectFrom('helpdesk_inbox_syncs')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('inbox_id', '=', inboxId)
        .orderBy('started_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row && toSync(row);
    },
    async running(workspaceId, inboxId) {
      const row = await db.selectFrom('helpdesk_inbox_syncs').selectAll().where('workspace_id', '=', workspaceId).where('inbox_id', '=', inboxId).where('status', '=', 'RUNNING').executeTakeFirst();
      return row && toSync(row);
    },
    async lock(workspaceId, id) {
      return lockInWorkspace(db, 'helpdesk_inbox_syncs', workspaceId, id, toSync);
    },
    async update(s) {
      await db.updateTable('helpdesk_inbox_syncs').set(toRow(s)).where('id', '=', s.id).execute();
    },
  };
}

/** The connection's chats and messages as a sync reads them (the base's `chats` and `messages`). */
export function chatHistory(base: Kysely<Database>): InboxSyncStores['history'] {
  const db = helpdeskDb(base);
  const oneToOne = (connectionId: string, after: string | null) => {
    let query = base.selectFrom('chats').where('connection_id', '=', connectionId).where('remote_jid', 'like', ONE_TO_ONE);
    if (after !== null) query = query.where('remote_jid', '>', after);
    return query;
  };
  return {
    async chats(connectionId, after, limit) {
      const rows = await oneToOne(connectionId, after).select(['remote_jid', 'name']).orderBy('remote_jid').limit(limit).execute();
      return rows.map((r) => ({ remoteJid: r.remote_jid, name: r.name }));
    },
    async countChats(connectionId, after) {
      const { total } = await oneToOne(connectionId, after).select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
      return Number(total);
    },
    async messages(connectionId, remoteJid, limit) {
      const rows = await db
        .selectFrom('messages as m')
        .select(['m.id', 'm.direction', 'm.content', 'm.status', 'm.error', 'm.message_timestamp'])
        // The sender only while they are a user (a helpdesk message's sender is a user).
        .select((eb) => eb.selectFrom('users').select('users.id').whereRef('users.id', '=', 'm.sent_by').as('sent_by'))
        .select((eb) => eb.exists(eb.selectFrom('helpdesk_messages as h').select('h.id').whereRef('h.chat_message_id', '=', 'm.id')).as('imported'))
        .where('m.connection_id', '=', connectionId)
        .where('m.remote_jid', '=', remoteJid)
        .orderBy('m.message_timestamp', 'desc')
        .orderBy('m.id', 'desc')
        .limit(limit)
        .execute();
      return rows.reverse().map(
        (r): HistoryMessage => ({
          id: r.id,
          direction: r.direction,
          text: chatMessageText(typeof r.content === 'string' ? JSON.parse(r.content) : r.content),
          status: r.status as HistoryMessage['status'],
          error: (typeof r.error === 'string' ? JSON.parse(r.error) : r.error) as HistoryMessage['error'],
          sentBy: r.sent_by ?? null,
          at: r.message_timestamp,
          imported: Boolean(r.imported),
        }),
      );
    },
    async lockContact(inboxId, phoneDigits) {
      // The key of the live subscriber (plugins/helpdesk/conversations/subscribers.ts): a live message and the
      // sync take turns on one contact.
      await sql`select pg_advisory_xact_lock(hashtext(${`helpdesk:${inboxId}:${phoneDigits}`}))`.execute(base);
    },
  };
}

/** Queues a page of a sync in the caller's transaction; keyed on the sync and the page's cursor. */
export function inboxSyncScheduler(outbox: Outbox): InboxSyncStores['jobs'] {
  return {
    async schedule(job) {
      await outbox.enqueue(INBOX_SYNC_QUEUE, job, { dedupeKey: `${job.syncId}:${job.after ?? ''}` });
    },
  };
}

/** The ports of the sync use cases, bound to one connection or transaction. */
export function inboxSyncStores(base: Kysely<Database>, ctx: PluginContext): InboxSyncStores {
  return {
    syncs: inboxSyncStore(base),
    history: chatHistory(base),
    jobs: inboxSyncScheduler(ctx.queue.outbox(base)),
    inboxes: inboxStore(base, ctx.box),
    contacts: contactStore(base),
    conversations: conversationStore(base),
    messages: helpdeskMessageStore(base),
    plans: workspacePlans(base),
    events: helpdeskEventLog(base, ctx),
  };
}
