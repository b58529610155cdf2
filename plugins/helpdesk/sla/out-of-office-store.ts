import type { DatabaseHandle, PluginContext } from '../../kernel/context.ts';
import type { OutOfOfficeStores } from '../../../core/helpdesk/inboxes/out-of-office.ts';
import { conversationStore } from '../conversations/store.ts';
import { systemReply } from '../conversations/system-reply.ts';
import { helpdeskDb } from '../tables.ts';
import { inboxHoursStore } from './store.ts';

/**
 * The ports of the out-of-office reply on one handle: the inbox's hours and zone, the claim of
 * the closed period (once per conversation and period) and the reply through the normal path.
 */
export function outOfOfficeStores(base: DatabaseHandle, ctx: PluginContext): OutOfOfficeStores {
  const db = helpdeskDb(base);
  return {
    hours: (inboxId) => inboxHoursStore(base).get(inboxId),
    async zoneOf(workspaceId, inboxId) {
      const row = await db.selectFrom('helpdesk_inboxes').select('timezone').where('workspace_id', '=', workspaceId).where('id', '=', inboxId).executeTakeFirst();
      return row?.timezone;
    },
    conversation: (workspaceId, id) => conversationStore(base).get(workspaceId, id),
    async claim(c) {
      const row = await db
        .insertInto('helpdesk_out_of_office_replies')
        .values({ conversation_id: c.conversationId, reopens_at: c.reopensAt, workspace_id: c.workspaceId, message_id: null, sent_at: c.sentAt })
        .onConflict((oc) => oc.columns(['conversation_id', 'reopens_at']).doNothing())
        .returning('conversation_id')
        .executeTakeFirst();
      return row !== undefined;
    },
    async setMessage(conversationId, reopensAt, messageId) {
      await db.updateTable('helpdesk_out_of_office_replies').set({ message_id: messageId }).where('conversation_id', '=', conversationId).where('reopens_at', '=', reopensAt).execute();
    },
    reply: systemReply(base, ctx),
  };
}
