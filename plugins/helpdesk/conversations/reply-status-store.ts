import type { Kysely } from 'kysely';
import { anyOf, compiledOnce, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { ChatDelivery, DeliveryScope, LaggingReply, ReplyStatusStores } from '../../../core/helpdesk/conversations/reply-status.ts';
import { conversationStore, helpdeskMessageStore, toMessage } from './store.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { helpdeskDb } from '../tables.ts';
import { isUuid } from '../../../core/shared/ids.ts';

const MOVING = ['PENDING', 'SENT', 'DELIVERED'] as const;
const REPORTED = ['SENT', 'DELIVERED', 'READ', 'FAILED'] as const;

/**
 * Of these delivery events, those whose scope holds a lagging reply now (not locked): one read
 * for a batch of events. Most deliveries carry no helpdesk reply; only the others need a
 * transaction (`laggingReplies` then finds and locks the replies again).
 */
export async function eventsWithLaggingReplies(base: Kysely<Database>, events: ReadonlyArray<{ eventId: string; scope: DeliveryScope }>): Promise<Set<string>> {
  // The connections, chats and network ids in scope, each as one array: the statement has one
  // text whatever the batch (prepared once by the database), and each arm is an index condition
  // (messages_chat_idx, messages_external_idx, the primary key), never a filter over a
  // connection's messages. An arm matches every pairing of its connections and values (a batch
  // rarely spans connections); the events' own pairs are picked below.
  const chatConnections = new Set<string>();
  const chats = new Set<string>();
  const namedConnections = new Set<string>();
  const named = new Set<string>();
  const own = new Set<string>();
  for (const { scope } of events) {
    if (scope.remoteJid) {
      chatConnections.add(scope.connectionId);
      chats.add(scope.remoteJid);
    }
    for (const id of usableIds(scope.messageIds)) {
      // A network id may look like one of ours: it is looked up both ways, as `laggingReplies` does.
      namedConnections.add(scope.connectionId);
      named.add(id);
      if (isUuid(id)) own.add(id);
    }
  }
  if (chats.size === 0 && named.size === 0) return new Set();
  const { rows } = await laggingRepliesOf(base, [...chatConnections], [...chats], [...namedConnections], [...named], [...own]);
  return new Set(
    events
      .filter(({ scope }) => {
        const names = new Set(usableIds(scope.messageIds));
        return rows.some((row) => row.connection_id === scope.connectionId && (row.remote_jid === scope.remoteJid || names.has(row.id) || (row.external_id !== null && names.has(row.external_id))));
      })
      .map((e) => e.eventId),
  );
}

/** Runs for every batch of delivery events: compiled once. */
const laggingRepliesOf = compiledOnce(
  (base: Kysely<Database>, chatConnections: string[], chats: string[], namedConnections: string[], named: string[], own: string[]) => {
    return helpdeskDb(base)
      .selectFrom('messages as m')
      .innerJoin('helpdesk_messages as hm', 'hm.chat_message_id', 'm.id')
      .select(['m.id', 'm.connection_id', 'm.remote_jid', 'm.external_id'])
      .where('m.direction', '=', 'outbound')
      .where('m.status', 'in', REPORTED)
      .where('hm.status', 'in', MOVING)
      .whereRef('m.status', '<>', 'hm.status')
      // Where no chat message ever became a helpdesk message (the helpdesk unused), there is
      // nothing to find: the database tests this first, one index probe, and skips the rest.
      .where(({ exists, selectFrom }) => exists(selectFrom('helpdesk_messages').select('helpdesk_messages.id').where('helpdesk_messages.chat_message_id', 'is not', null)))
      .where((eb) =>
        eb.or([
          eb.and([eb('m.connection_id', '=', anyOf(chatConnections, 'uuid')), eb('m.remote_jid', '=', anyOf(chats, 'text'))]),
          eb.and([eb('m.connection_id', '=', anyOf(namedConnections, 'uuid')), eb('m.external_id', '=', anyOf(named, 'text'))]),
          eb('m.id', '=', anyOf(own, 'uuid')),
        ]),
      );
  },
);

/** The message ids of a scope worth looking up (a provider's data may name anything). */
function usableIds(messageIds: readonly unknown[]): string[] {
  return messageIds.filter((id): id is string => typeof id === 'string' && id.length > 0 && id.length <= 200).slice(0, 100);
}

/** The ports of core/helpdesk/conversations/reply-status.ts, bound to one transaction. */
export function replyStatusStores(base: Kysely<Database>, ctx: PluginContext): ReplyStatusStores {
  const db = helpdeskDb(base);
  return {
    async laggingReplies({ connectionId, remoteJid, messageIds }) {
      const candidates = () =>
        db
          .selectFrom('messages as m')
          .innerJoin('helpdesk_messages as hm', 'hm.chat_message_id', 'm.id')
          .select('hm.id')
          .where('m.connection_id', '=', connectionId)
          .where('m.direction', '=', 'outbound')
          .where('m.status', 'in', REPORTED)
          .where('hm.status', 'in', MOVING)
          .whereRef('m.status', '<>', 'hm.status');
      const find = async (narrow: (q: ReturnType<typeof candidates>) => ReturnType<typeof candidates>) => (await narrow(candidates()).execute()).map((r) => r.id);
      const ids = new Set<string>();
      // The chat's outgoing messages (messages_chat_idx), and those the event names (messages_external_idx, primary key).
      if (remoteJid) for (const id of await find((q) => q.where('m.remote_jid', '=', remoteJid))) ids.add(id);
      const named = usableIds(messageIds);
      if (named.length > 0) for (const id of await find((q) => q.where('m.external_id', 'in', named))) ids.add(id);
      const own = named.filter(isUuid);
      if (own.length > 0) for (const id of await find((q) => q.where('m.id', 'in', own))) ids.add(id);
      const lagging: LaggingReply[] = [];
      // Oldest first (ids are UUID v7), so events come out in the order the replies were written.
      for (const id of [...ids].sort()) {
        // Locked, then read again: two workers handling two receipts of one chat move it once.
        const row = await db.selectFrom('helpdesk_messages').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
        if (!row || row.chat_message_id === null) continue;
        const chat = await base.selectFrom('messages').select(['status', 'error']).where('id', '=', row.chat_message_id).executeTakeFirst();
        const conversation = await conversationStore(base).get(row.workspace_id, row.conversation_id);
        if (!chat || !conversation) continue;
        const error = (typeof chat.error === 'string' ? JSON.parse(chat.error) : chat.error) as ChatDelivery['error'];
        lagging.push({ conversation, message: toMessage(row), delivery: { status: chat.status as ChatDelivery['status'], error } });
      }
      return lagging;
    },
    messages: helpdeskMessageStore(base),
    events: helpdeskEventLog(base, ctx),
  };
}
