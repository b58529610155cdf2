import { sql } from 'kysely';
import type { PluginContext } from '../../kernel/context.ts';
import { anyOf, compiledOnce, mediaStore, type DatabaseHandle } from '../../kernel/storage.ts';
import type { Inbox } from '../../../core/helpdesk/inboxes/inboxes.ts';
import { inboxStore } from '../inboxes/inbox-and-contact-stores.ts';
import { helpdeskDb } from '../tables.ts';
import { conversationStores } from './store.ts';

/** Of these connections, those a CONNECTION inbox serves (`workspaceId|connectionId`). */
export async function connectionsWithInboxes(base: DatabaseHandle, connections: ReadonlyArray<{ workspaceId: string; connectionId: string }>): Promise<Set<string>> {
  if (connections.length === 0) return new Set();
  const { rows } = await inboxesOfConnections(base, [...new Set(connections.map((c) => c.workspaceId))], [...new Set(connections.map((c) => c.connectionId))]);
  return new Set(rows.map((row) => `${row.workspace_id}|${row.connection_id}`));
}

/** Runs for every batch of incoming messages: one shape (the ids as arrays), compiled once. */
const inboxesOfConnections = compiledOnce((base: DatabaseHandle, workspaceIds: string[], connectionIds: string[]) =>
  helpdeskDb(base)
    .selectFrom('helpdesk_inboxes')
    .select(['workspace_id', 'connection_id'])
    .distinct()
    .where('workspace_id', '=', anyOf(workspaceIds, 'uuid'))
    .where('connection_id', '=', anyOf(connectionIds, 'uuid'))
    .where('channel_type', '=', 'CONNECTION'),
);

/**
 * What a contact's message arriving on a connection needs to join a conversation, bound to one
 * transaction: the inbox of the connection, the connection message it was stored as, a lock per
 * contact, the connection's media and the conversation ports.
 */
export function incomingMessageStores(base: DatabaseHandle, ctx: PluginContext) {
  const db = helpdeskDb(base);
  return {
    /** The CONNECTION inbox bound to this connection, if the helpdesk serves it. */
    async connectionInbox(workspaceId: string, connectionId: string): Promise<Inbox | undefined> {
      const row = await db
        .selectFrom('helpdesk_inboxes')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('connection_id', '=', connectionId)
        .where('channel_type', '=', 'CONNECTION')
        .executeTakeFirst();
      return row && inboxStore(base, ctx.box).get(workspaceId, row.id);
    },
    /** The connection's message with this network id (the event names it; the message is stored first). */
    chatMessage(connectionId: string, externalId: string) {
      return base.selectFrom('messages').select(['id', 'created_at']).where('connection_id', '=', connectionId).where('external_id', '=', externalId).executeTakeFirst();
    },
    /**
     * One contact's messages are handled one at a time (two first messages at once would both
     * create the contact or a conversation): a transaction lock on the inbox and phone.
     */
    async lockContact(inboxId: string, phoneDigits: string): Promise<void> {
      await sql`select pg_advisory_xact_lock(hashtext(${`helpdesk:${inboxId}:${phoneDigits}`}))`.execute(base);
    },
    media: mediaStore(base),
    conversations: conversationStores(base, ctx),
  };
}

export type IncomingMessageStores = ReturnType<typeof incomingMessageStores>;
