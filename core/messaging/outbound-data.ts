import { toMessageData } from './incoming.ts';
import type { ChatMessage } from './message.ts';
import type { OutgoingContent } from './outgoing.ts';
import { contactCards } from './vcard.ts';

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
  const data = toMessageData(
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
  const node = sentNode(message.content as OutgoingContent);
  if (node) data.message = { [messageType]: node };
  return data;
}

/**
 * Nodes of the kinds whose request fields are not the network's node fields: what was sent, in
 * the names of the network's own message protos (Baileys' `contactsArrayMessage`, `listMessage`,
 * `buttonsMessage`), so a consumer reads a sent list as it would read one typed on the phone.
 */
function sentNode(content: OutgoingContent): Record<string, unknown> | undefined {
  switch (content.kind) {
    case 'contacts':
      return contactCards(content.contacts);
    case 'list': {
      const { header, body, buttonText, footer, sections } = content.list;
      return {
        ...(header && { title: header }),
        description: body,
        buttonText,
        ...(footer && { footerText: footer }),
        listType: 'SINGLE_SELECT',
        sections: sections.map((section) => ({
          title: section.title,
          rows: section.rows.map((row) => ({ rowId: row.id, title: row.title, ...(row.description && { description: row.description }) })),
        })),
      };
    }
    case 'buttons': {
      const { header, body, footer, buttons } = content.buttons;
      return {
        ...(header && { text: header, headerType: 'TEXT' }),
        contentText: body,
        ...(footer && { footerText: footer }),
        buttons: buttons.map((button) => ({ buttonId: button.id, buttonText: { displayText: button.title }, type: 'RESPONSE' })),
      };
    }
    default:
      return undefined;
  }
}
