import type { ChatMessage } from '../messaging/message.ts';

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
