import type { AnyMessageContent, WAMediaUpload, WAMessage, WAMessageKey } from 'baileys';
import { DriverError, type OutgoingMedia } from '../../../core/connections/driver.ts';
import type { OutgoingContent, OutgoingMessage } from '../../../core/messaging/outgoing.ts';
import { contactCards } from '../../../core/messaging/vcard.ts';

export { toVcard } from '../../../core/messaging/vcard.ts';

/**
 * Pure mapping of the core's `OutgoingMessage` to Baileys `sendMessage` content.
 *
 * What the unofficial network cannot carry degrades or is refused here:
 * - `list` and `buttons`: WhatsApp stopped rendering the legacy list and button messages for
 *   unofficial clients (they arrive blank or not at all), and Baileys 7 no longer builds them. They
 *   go out as text with numbered options; the contact answers with the number or the title, which
 *   arrives as an ordinary `conversation`.
 * - `template`: templates exist only on the official Business API; refused, not retryable.
 */

/** `5511999999999` → `5511999999999@s.whatsapp.net`; group, LID and other JIDs pass unchanged. */
export function toJid(to: string): string {
  if (to.includes('@')) return to;
  return `${to.replace(/[^0-9]/g, '')}@s.whatsapp.net`;
}

export interface OutgoingContext {
  /** The resolved media of a media message (bytes or a public URL). */
  media?: OutgoingMedia;
  /** The key of the message a reaction is for (found in the store; defaults to a contact's message in this chat). */
  reactionKey?: WAMessageKey;
}

export function toBaileysContent(message: OutgoingMessage, context: OutgoingContext = {}): AnyMessageContent {
  const content = message.content;
  switch (content.kind) {
    case 'text':
      // `linkPreview: null` tells Baileys not to build a preview; undefined lets it decide.
      return content.previewUrl === false ? { text: content.text, linkPreview: null } : { text: content.text };
    case 'image': {
      const media = requireMedia(content, context.media);
      return { image: upload(media), mimetype: media.mimetype, ...(content.image.caption && { caption: content.image.caption }) };
    }
    case 'video': {
      const media = requireMedia(content, context.media);
      return { video: upload(media), mimetype: media.mimetype, ...(content.video.caption && { caption: content.video.caption }) };
    }
    case 'audio': {
      const media = requireMedia(content, context.media);
      const voiceNote = content.audio.voiceNote === true;
      // A voice note plays only as Opus in Ogg, and the network wants the codec named.
      const mimetype = voiceNote && /^audio\/ogg\s*$/i.test(media.mimetype) ? 'audio/ogg; codecs=opus' : media.mimetype;
      return { audio: upload(media), mimetype, ptt: voiceNote };
    }
    case 'document': {
      const media = requireMedia(content, context.media);
      const fileName = content.document.fileName ?? media.fileName;
      return {
        document: upload(media),
        mimetype: media.mimetype,
        ...(fileName && { fileName }),
        ...(content.document.caption && { caption: content.document.caption }),
      };
    }
    case 'sticker': {
      const media = requireMedia(content, context.media);
      return { sticker: upload(media), mimetype: media.mimetype };
    }
    case 'location': {
      const { latitude, longitude, name, address } = content.location;
      return { location: { degreesLatitude: latitude, degreesLongitude: longitude, ...(name && { name }), ...(address && { address }) } };
    }
    case 'contacts':
      return { contacts: contactCards(content.contacts) };
    case 'list':
      return { text: listAsText(content.list) };
    case 'buttons':
      return { text: buttonsAsText(content.buttons) };
    case 'reaction':
      return {
        react: {
          text: content.reaction.emoji,
          key: context.reactionKey ?? { remoteJid: toJid(message.to), id: content.reaction.messageId, fromMe: false },
        },
      };
    case 'template':
      throw new DriverError('templates are not supported on unofficial connections: send text or media instead', 'unsupported_template', false);
    case 'flow':
      throw new DriverError('Flows are not supported on unofficial connections', 'unsupported_flow', false);
  }
}

/**
 * The message a reply quotes: the stored original when this connection saw it, otherwise a
 * stand-in with its id (the app shows the quote from its own copy of the message).
 */
export function quotedMessage(to: string, messageId: string, stored?: WAMessage): WAMessage {
  if (stored?.key?.id && stored.message) return stored;
  return { key: { remoteJid: toJid(to), id: messageId, fromMe: false }, message: { conversation: '' } };
}

/** A list message as text: header, body, numbered rows under their section titles, footer. */
export function listAsText(list: Extract<OutgoingContent, { kind: 'list' }>['list']): string {
  const parts: string[] = [];
  if (list.header) parts.push(`*${list.header}*`);
  parts.push(list.body);
  let n = 0;
  const sections = list.sections.map((section) => {
    const rows = section.rows.map((row) => {
      n += 1;
      return `${n}. ${row.title}${row.description ? ` — ${row.description}` : ''}`;
    });
    return [section.title ? `*${section.title}*` : undefined, ...rows].filter(Boolean).join('\n');
  });
  parts.push(`${list.buttonText}:\n${sections.join('\n\n')}`);
  if (list.footer) parts.push(`_${list.footer}_`);
  return parts.join('\n\n');
}

/** A buttons message as text: header, body, numbered choices, footer. */
export function buttonsAsText(buttons: Extract<OutgoingContent, { kind: 'buttons' }>['buttons']): string {
  const parts: string[] = [];
  if (buttons.header) parts.push(`*${buttons.header}*`);
  parts.push(buttons.body);
  parts.push(buttons.buttons.map((b, i) => `${i + 1}. ${b.title}`).join('\n'));
  if (buttons.footer) parts.push(`_${buttons.footer}_`);
  return parts.join('\n\n');
}

function requireMedia(content: OutgoingContent, media: OutgoingMedia | undefined): OutgoingMedia {
  if (media && (media.bytes || media.url)) return media;
  throw new DriverError(`the ${content.kind} to send has neither bytes nor a URL`, 'media_missing', false);
}

function upload(media: OutgoingMedia): WAMediaUpload {
  if (media.bytes) return Buffer.from(media.bytes.buffer, media.bytes.byteOffset, media.bytes.byteLength);
  return { url: media.url! };
}
