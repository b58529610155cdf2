import type { Actor } from '../identity/identity.ts';
import { getMessage, type HistoryStores } from '../messaging/history.ts';
import type { ChatMessage } from '../messaging/message.ts';
import { notFound } from '../shared/errors.ts';

/**
 * The id of the media held for a message of a chat, for a download with the API key (reading
 * messages: the roles matrix's "read messages on a connection"). 404 for a message of another
 * chat, or without media held here.
 */
export async function mediaOfChatMessage(stores: HistoryStores, actor: Actor, connectionId: string, remoteJid: string, messageId: string): Promise<string> {
  const message = await getMessage(stores, actor, connectionId, messageId);
  if (message.remoteJid !== remoteJid) throw notFound(`Message ${messageId} not found in this chat`);
  const mediaId = mediaIdOf(message);
  if (!mediaId) throw notFound('This message carries no media held here (none, or sent by public URL)');
  return mediaId;
}

/**
 * The id of the media a message carries, where the service holds its bytes: a received
 * message's media (its `downloadMediaUrl` names it) or an uploaded media sent by `mediaId`.
 * Undefined for a message without media, or media sent by public URL (never stored here).
 */
export function mediaIdOf(message: ChatMessage): string | undefined {
  const content = message.content as Record<string, any> | null;
  if (!content || typeof content !== 'object') return undefined;
  if (message.direction === 'inbound') {
    const node = content.message && typeof content.message === 'object' ? content.message[content.messageType] : undefined;
    const url = node && typeof node === 'object' ? node.downloadMediaUrl : undefined;
    return typeof url === 'string' ? /\/media\/([^/?#]+)\/download/.exec(url)?.[1] : undefined;
  }
  const media = content[message.kind];
  return media && typeof media === 'object' && typeof media.mediaId === 'string' ? media.mediaId : undefined;
}
