import type { Kysely } from 'kysely';
import type { ChatWindows, ConversationWindowStores } from '../../../core/helpdesk/conversations/conversation-window.ts';
import { normalizeRecipient } from '../../../core/messaging/outgoing.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { Database } from '../../kernel/storage.ts';
import { contactStore, inboxStore } from '../inboxes/inbox-and-contact-stores.ts';

/** The send windows the connections keep in their `chats` rows (the send path checks the same: core/messaging/send.ts). */
export function chatWindows(base: Kysely<Database>, ctx: Pick<PluginContext, 'drivers'>): ChatWindows {
  return {
    async chatWindow(workspaceId, connectionId, phone) {
      const connection = await base.selectFrom('connections').select('kind').where('workspace_id', '=', workspaceId).where('id', '=', connectionId).executeTakeFirst();
      if (!connection || !ctx.drivers.get(connection.kind)?.capabilities.sendWindow) return null;
      if (phone === null) return { lastContactMessageAt: null };
      const chat = await base
        .selectFrom('chats')
        .select('last_contact_message_at')
        .where('connection_id', '=', connectionId)
        .where('remote_jid', '=', `${normalizeRecipient(phone)}@s.whatsapp.net`)
        .executeTakeFirst();
      return { lastContactMessageAt: chat?.last_contact_message_at ?? null };
    },
  };
}

/** What the conversation's send window is read from. */
export function conversationWindowStores(base: Kysely<Database>, ctx: PluginContext): ConversationWindowStores {
  return { inboxes: inboxStore(base, ctx.box), contacts: contactStore(base), chatWindows: chatWindows(base, ctx) };
}
