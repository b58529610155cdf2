import type { Kysely } from 'kysely';
import type { Database } from '../../adapters/postgres/schema.ts';
import type { AppContext } from '../../adapters/http/context.ts';
import type { ChatDelivery, LaggingReply, ReplyStatusStores } from '../../core/helpdesk/reply-status.ts';
import { conversationStore, helpdeskMessageStore, toMessage } from './conversation-store.ts';
import { helpdeskEventLog } from './event-log.ts';
import { helpdeskDb } from './schema.ts';
import { isUuid } from '../../adapters/postgres/repositories/connection-store.ts';

const MOVING = ['PENDING', 'SENT', 'DELIVERED'] as const;
const REPORTED = ['SENT', 'DELIVERED', 'READ', 'FAILED'] as const;

/** The ports of core/helpdesk/reply-status.ts, bound to one transaction. */
export function replyStatusStores(base: Kysely<Database>, ctx: AppContext): ReplyStatusStores {
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
      const named = messageIds.filter((id) => typeof id === 'string' && id.length > 0 && id.length <= 200).slice(0, 100);
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
