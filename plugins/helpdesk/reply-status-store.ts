import type { Kysely } from 'kysely';
import type { Database } from '../../adapters/postgres/schema.ts';
import type { AppContext } from '../../adapters/http/context.ts';
import type { ChatDelivery, DeliveryScope, LaggingReply, ReplyStatusStores } from '../../core/helpdesk/reply-status.ts';
import { conversationStore, helpdeskMessageStore, toMessage } from './conversation-store.ts';
import { helpdeskEventLog } from './event-log.ts';
import { helpdeskDb } from './schema.ts';
import { isUuid } from '../../adapters/postgres/repositories/connection-store.ts';

const MOVING = ['PENDING', 'SENT', 'DELIVERED'] as const;
const REPORTED = ['SENT', 'DELIVERED', 'READ', 'FAILED'] as const;

/**
 * The helpdesk replies in scope whose connection message's status differs from theirs (not
 * locked): the chat's outgoing messages (messages_chat_idx) and those the event names
 * (messages_external_idx, primary key), in one query. Most deliveries carry no reply: the
 * subscriber asks this before it opens a transaction.
 */
export async function laggingReplyIds(base: Kysely<Database>, { connectionId, remoteJid, messageIds }: DeliveryScope): Promise<string[]> {
  const named = messageIds.filter((id) => typeof id === 'string' && id.length > 0 && id.length <= 200).slice(0, 100);
  const own = named.filter(isUuid);
  if (!remoteJid && named.length === 0) return [];
  const rows = await helpdeskDb(base)
    .selectFrom('messages as m')
    .innerJoin('helpdesk_messages as hm', 'hm.chat_message_id', 'm.id')
    .select('hm.id')
    .where('m.connection_id', '=', connectionId)
    .where('m.direction', '=', 'outbound')
    .where('m.status', 'in', REPORTED)
    .where('hm.status', 'in', MOVING)
    .whereRef('m.status', '<>', 'hm.status')
    .where((eb) =>
      eb.or([
        ...(remoteJid ? [eb('m.remote_jid', '=', remoteJid)] : []),
        ...(named.length > 0 ? [eb('m.external_id', 'in', named)] : []),
        ...(own.length > 0 ? [eb('m.id', 'in', own)] : []),
      ]),
    )
    .execute();
  return [...new Set(rows.map((r) => r.id))];
}

/** The ports of core/helpdesk/reply-status.ts, bound to one transaction. */
export function replyStatusStores(base: Kysely<Database>, ctx: AppContext): ReplyStatusStores {
  const db = helpdeskDb(base);
  return {
    async laggingReplies(scope) {
      const ids = await laggingReplyIds(base, scope);
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
