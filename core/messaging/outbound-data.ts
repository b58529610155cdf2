import { toMessageData } from './incoming.ts';
import type { ChatMessage } from './message.ts';

const MESSAGE_TYPE_OF_KIND: Record<string, string> = {
  text: 'conversation',
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
  document: 'documentMessage',
  sticker: 'stickerMessage',
  location: 'locationMessage',
  contacts: 'contactsArrayMessage',
  reaction: 'reactionMessage',
};

/** An outgoing message in the closed 2.13 shape, for `send.message`. */
export function outboundData(message: ChatMessage) {
  const content = message.content as Record<string, any>;
  const messageType = MESSAGE_TYPE_OF_KIND[message.kind] ?? `${message.kind}Message`;
  return toMessageData(
    {
      externalId: message.externalId ?? message.id,
      remoteJid: message.remoteJid,
      fromMe: true,
      pushName: '',
      messageType,
      node: message.kind === 'text' ? {} : { ...(content[message.kind] ?? {}) },
      text: message.kind === 'text' ? content.text : undefined,
      timestamp: Math.floor(message.messageTimestamp.getTime() / 1000),
      source: 'unknown',
      isAiMessage: false,
      contextInfo: message.replyTo ? { stanzaId: message.replyTo } : undefined,
    },
    { status: 'SERVER_ACK' },
  );
}
