import { sql, type Kysely } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import { mediaStore } from '../../kernel/storage.ts';
import { cleanFileName, defaultFileName, type IncomingAttachment } from '../../../core/helpdesk/conversations/message-attachments.ts';
import type { EventSubscriber, PluginContext } from '../../kernel/plugin.ts';
import { receiveIncoming } from '../../../core/helpdesk/conversations/conversations.ts';
import { followDeliveries, type DeliveryScope } from '../../../core/helpdesk/conversations/reply-status.ts';
import { eventsWithLaggingReplies, replyStatusStores } from './reply-status-store.ts';
import { helpdeskDb } from '../tables.ts';
import { conversationStores } from './store.ts';
import { inboxStore } from '../inboxes/inbox-and-contact-stores.ts';

/** The stored event as the worker hands it to subscribers (plugins/kernel/events.ts). */
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

const MEDIA_TYPES = ['imageMessage', 'videoMessage', 'audioMessage', 'documentMessage', 'stickerMessage'];

/**
 * The media of an incoming message as an attachment: the connection's media item named by the
 * node's `downloadMediaUrl` (present only when the media is referenceable), of this workspace
 * and connection. Its bytes stay there (fetched from the network by the media job or on download).
 */
async function receivedFiles(trx: Kysely<Database>, event: StoredEvent): Promise<IncomingAttachment[]> {
  const type = event.data.messageType;
  const node = type && MEDIA_TYPES.includes(type) ? event.data.message?.[type] : undefined;
  const url = typeof node?.downloadMediaUrl === 'string' ? node.downloadMediaUrl : undefined;
  const mediaId = url && /\/v3\/connections\/media\/([0-9a-f-]{36})\/download/i.exec(url)?.[1];
  if (!mediaId) return [];
  const media = await mediaStore(trx).get(mediaId);
  if (!media || media.workspaceId !== event.workspaceId || media.connectionId !== event.connectionId) return [];
  const kind = type!.replace(/Message$/, '');
  return [{ mediaId: media.id, fileName: cleanFileName(media.fileName, defaultFileName(kind, media.mimetype)), mimeType: media.mimetype, size: media.size }];
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
    const chat = await trx.selectFrom('messages').select(['id', 'created_at']).where('connection_id', '=', event.connectionId).where('external_id', '=', externalId).executeTakeFirst();
    if (!inbox || !chat) return;
    // One contact's messages are handled one at a time (two first messages at once would both
    // create the contact or a conversation): a transaction lock on the inbox and phone.
    await sql`select pg_advisory_xact_lock(hashtext(${`helpdesk:${inbox.id}:${match[1]}`}))`.execute(trx);
    await receiveIncoming(conversationStores(trx, ctx), { clock: ctx.clock, ids: ctx.ids }, inbox, {
      phone: `+${match[1]}`,
      name: event.data.pushName?.trim() || null,
      content: incomingText(event.data),
      chatMessageId: chat.id,
      receivedAt: chat.created_at,
      attachments: await receivedFiles(trx, event),
    });
  });
}

/** Message ids an event names: `key.id` (`send.message`, `messages.update`) and `statuses[].id` (`messages.update`); `id` for older stored events. */
function namedMessageIds(data: unknown): string[] {
  const ids: string[] = [];
  const visit = (node: any) => {
    if (!node || typeof node !== 'object') return;
    if (typeof node.key?.id === 'string') ids.push(node.key.id);
    if (typeof node.id === 'string') ids.push(node.id);
    if (Array.isArray(node.statuses)) for (const status of node.statuses) if (typeof status?.id === 'string') ids.push(status.id);
  };
  for (const node of Array.isArray(data) ? data : [data]) visit(node);
  return [...new Set(ids)];
}

/**
 * A connection message's delivery changed (`send.message`: handed to the network; `messages.update`:
 * a receipt, or the send failed for good): the replies it carries follow, stored, with
 * `helpdesk.message.status_changed` (core/helpdesk/conversations/reply-status.ts). Idempotent: a replayed
 * event finds nothing lagging.
 */
export async function onDeliveryChanged(payload: unknown, ctx: PluginContext): Promise<void> {
  const scope = deliveryScope(payload as StoredEvent);
  if (!scope) return;
  await ctx.db.transaction().execute((trx) => followDeliveries(replyStatusStores(trx, ctx), scope));
}

/** Of a batch of delivery events, those that carry a lagging reply (most carry none): one read. */
export async function deliveriesWithLaggingReplies(payloads: unknown[], ctx: PluginContext): Promise<ReadonlySet<string>> {
  const events = (payloads as StoredEvent[]).flatMap((event) => {
    const scope = deliveryScope(event);
    return scope ? [{ eventId: event.eventId, scope }] : [];
  });
  return eventsWithLaggingReplies(ctx.db, events);
}

function deliveryScope(event: StoredEvent): DeliveryScope | undefined {
  if (!event.connectionId) return undefined;
  return { connectionId: event.connectionId, remoteJid: event.remoteJid, messageIds: namedMessageIds(event.data) };
}

export const HELPDESK_SUBSCRIBERS: EventSubscriber[] = [
  { event: 'messages.upsert', handle: onIncomingMessage },
  { event: 'messages.update', handle: onDeliveryChanged, select: deliveriesWithLaggingReplies },
  { event: 'send.message', handle: onDeliveryChanged, select: deliveriesWithLaggingReplies },
];
