import { cleanFileName, defaultFileName, type IncomingAttachment } from '../../../core/helpdesk/conversations/message-attachments.ts';
import type { ConnectionTable, EventSubscriber, PluginContext } from '../../kernel/plugin.ts';
import { receiveIncoming } from '../../../core/helpdesk/conversations/conversations.ts';
import { followDeliveries, type DeliveryScope } from '../../../core/helpdesk/conversations/reply-status.ts';
import { eventsWithLaggingReplies, replyStatusStores } from './reply-status-store.ts';
import { connectionsWithInboxes, incomingMessageStores, type IncomingMessageStores } from './incoming-message-store.ts';

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
async function receivedFiles(media: IncomingMessageStores['media'], event: StoredEvent): Promise<IncomingAttachment[]> {
  const type = event.data.messageType;
  const node = type && MEDIA_TYPES.includes(type) ? event.data.message?.[type] : undefined;
  const url = typeof node?.downloadMediaUrl === 'string' ? node.downloadMediaUrl : undefined;
  const mediaId = url && /\/v3\/connections\/media\/([0-9a-f-]{36})\/download/i.exec(url)?.[1];
  if (!mediaId) return [];
  const item = await media.get(mediaId);
  if (!item || item.workspaceId !== event.workspaceId || item.connectionId !== event.connectionId) return [];
  const kind = type!.replace(/Message$/, '');
  return [{ mediaId: item.id, fileName: cleanFileName(item.fileName, defaultFileName(kind, item.mimetype)), mimeType: item.mimetype, size: item.size }];
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
  const connectionId = event.connectionId;
  await ctx.storage.transaction(incomingMessageStores, async (stores) => {
    const inbox = await stores.connectionInbox(event.workspaceId, connectionId);
    if (!inbox) return;
    const chat = await stores.chatMessage(connectionId, externalId);
    if (!chat) return;
    await stores.lockContact(inbox.id, match[1]!);
    await receiveIncoming(stores.conversations, { clock: ctx.clock, ids: ctx.ids }, inbox, {
      phone: `+${match[1]}`,
      name: event.data.pushName?.trim() || null,
      content: incomingText(event.data),
      chatMessageId: chat.id,
      receivedAt: chat.created_at,
      attachments: await receivedFiles(stores.media, event),
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
  await ctx.storage.transaction(replyStatusStores, (stores) => followDeliveries(stores, scope));
}

/** Of a batch of delivery events, those that carry a lagging reply (most carry none): one read. */
export async function deliveriesWithLaggingReplies(payloads: unknown[], ctx: PluginContext): Promise<ReadonlySet<string>> {
  const events = (payloads as StoredEvent[]).flatMap((event) => {
    const scope = deliveryScope(event);
    return scope ? [{ eventId: event.eventId, scope }] : [];
  });
  return ctx.storage.read((db) => eventsWithLaggingReplies(db, events));
}

function deliveryScope(event: StoredEvent): DeliveryScope | undefined {
  if (!event.connectionId) return undefined;
  return { connectionId: event.connectionId, remoteJid: event.remoteJid, messageIds: namedMessageIds(event.data) };
}

/** Of a batch of incoming messages, those on a connection bound to an inbox (on most connections, none): one read. */
export async function messagesForInboxes(payloads: unknown[], ctx: PluginContext): Promise<ReadonlySet<string>> {
  const events = (payloads as StoredEvent[]).filter((event) => event.connectionId && !event.data?.key?.fromMe);
  const bound = await ctx.storage.read((db) => connectionsWithInboxes(db, events.map((event) => ({ workspaceId: event.workspaceId, connectionId: event.connectionId! }))));
  return new Set(events.filter((event) => bound.has(`${event.workspaceId}|${event.connectionId}`)).map((event) => event.eventId));
}

/**
 * The connections the helpdesk acts on: those bound to an inbox (unique per workspace and
 * connection). A reply goes out on its inbox's connection, so its delivery events are there too;
 * an inbox moved to another connection no longer follows the replies still on their way on the
 * old one. Elsewhere the message events are not queued for the helpdesk at all.
 */
const INBOX_CONNECTIONS: ConnectionTable = { table: 'helpdesk_inboxes', workspaceColumn: 'workspace_id', connectionColumn: 'connection_id' };

export const HELPDESK_SUBSCRIBERS: EventSubscriber[] = [
  { event: 'messages.upsert', handle: onIncomingMessage, select: messagesForInboxes, onlyOnConnectionsIn: INBOX_CONNECTIONS },
  { event: 'messages.update', handle: onDeliveryChanged, select: deliveriesWithLaggingReplies, onlyOnConnectionsIn: INBOX_CONNECTIONS },
  { event: 'send.message', handle: onDeliveryChanged, select: deliveriesWithLaggingReplies, onlyOnConnectionsIn: INBOX_CONNECTIONS },
];
