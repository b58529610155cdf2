import { sql } from 'kysely';
import type { EventSubscriber, PluginContext } from '../plugin.ts';
import { receiveIncoming } from '../../core/helpdesk/conversations.ts';
import { helpdeskDb } from './schema.ts';
import { conversationStores } from './conversation-store.ts';
import { inboxStore } from './store.ts';

/** The stored event as the worker hands it to subscribers (apps/plugin-events.ts). */
interface StoredEvent {
  eventId: string;
  workspaceId: string;
  event: string;
  connectionId: string | null;
  remoteJid: string | null;
  data: {
    key?: { id?: string; remoteJid?: string; fromMe?: boolean };
    pushName?: string | null;
    messageType?: string;
    message?: Record<string, any>;
  };
}

/** The words of an incoming message (spec 2.13 shapes); other kinds show as `[imageMessage]`. */
export function incomingText(data: StoredEvent['data']): string {
  const message = data.message ?? {};
  if (typeof message.conversation === 'string' && message.conversation) return message.conversation;
  const node = data.messageType ? message[data.messageType] : undefined;
  if (node && typeof node === 'object') {
    for (const field of ['text', 'caption', 'fileName']) if (typeof node[field] === 'string' && node[field]) return node[field];
  }
  return `[${data.messageType ?? 'message'}]`;
}

/**
 * `messages.upsert` on a connection bound to an inbox: the contact's message joins (or opens) a
 * conversation. Group chats and broadcasts are not helpdesk conversations and are left out.
 * Idempotent: the helpdesk message is keyed on the connection message id, in one transaction.
 */
export async function onIncomingMessage(payload: unknown, ctx: PluginContext): Promise<void> {
  const event = payload as StoredEvent;
  const jid = event.remoteJid ?? event.data?.key?.remoteJid;
  const externalId = event.data?.key?.id;
  if (!event.connectionId || !jid || !externalId || event.data?.key?.fromMe) return;
  const match = /^(\d{6,15})@s\.whatsapp\.net$/.exec(jid);
  if (!match) return;
  await ctx.db.transaction().execute(async (trx) => {
    const db = helpdeskDb(trx);
    const inboxRow = await db
      .selectFrom('helpdesk_inboxes')
      .select('id')
      .where('workspace_id', '=', event.workspaceId)
      .where('connection_id', '=', event.connectionId)
      .where('channel_type', '=', 'CONNECTION')
      .executeTakeFirst();
    if (!inboxRow) return;
    const inbox = await inboxStore(trx, ctx.box).get(event.workspaceId, inboxRow.id);
    const chat = await trx.selectFrom('messages').select('id').where('connection_id', '=', event.connectionId).where('external_id', '=', externalId).executeTakeFirst();
    if (!inbox || !chat) return;
    // One contact's messages are handled one at a time (two first messages at once would both
    // create the contact or a conversation): a transaction lock on the inbox and phone.
    await sql`select pg_advisory_xact_lock(hashtext(${`helpdesk:${inbox.id}:${match[1]}`}))`.execute(trx);
    await receiveIncoming(conversationStores(trx, ctx), { clock: ctx.clock, ids: ctx.ids }, inbox, {
      phone: `+${match[1]}`,
      name: event.data.pushName?.trim() || null,
      content: incomingText(event.data),
      chatMessageId: chat.id,
    });
  });
}

export const HELPDESK_SUBSCRIBERS: EventSubscriber[] = [{ event: 'messages.upsert', handle: onIncomingMessage }];
