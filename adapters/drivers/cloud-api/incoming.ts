import type { ContextInfo, ReceivedMessage } from '../../../core/messaging/incoming.ts';
import type { WebhookMedia, WebhookMessage } from './graph-types.ts';
import { displayNameOf, toVcard } from './vcard.ts';

/**
 * One Cloud API webhook message (`entry[].changes[].value.messages[]`) in the closed shape of
 * spec 2.13. The Cloud API's types become the network's own node names:
 *
 * | Cloud API                 | messageType                | node                                                        |
 * |---------------------------|----------------------------|-------------------------------------------------------------|
 * | text                      | conversation               | `{ conversation }`                                          |
 * | image / video             | imageMessage / videoMessage| `{ caption? }` + media                                      |
 * | audio                     | audioMessage               | `{ ptt }` (`voice`) + media                                 |
 * | document                  | documentMessage            | `{ fileName?, caption? }` + media                           |
 * | sticker                   | stickerMessage             | `{ isAnimated? }` + media                                   |
 * | location                  | locationMessage            | `{ degreesLatitude, degreesLongitude, name?, address?, url? }` |
 * | contacts (one / several)  | contactMessage / contactsArrayMessage | `{ displayName, vcard }` / `{ displayName, contacts }` |
 * | interactive.button_reply  | buttonsResponseMessage     | `{ selectedButtonId, selectedDisplayText }`                 |
 * | interactive.list_reply    | listResponseMessage        | `{ title, description?, singleSelectReply: { selectedRowId } }` |
 * | interactive.nfm_reply     | interactiveResponseMessage | `{ nativeFlowResponseMessage: { name, paramsJson } }`       |
 * | button (template reply)   | templateButtonReplyMessage | `{ selectedId, selectedDisplayText }`                       |
 * | reaction                  | reactionMessage            | `{ key: { id, remoteJid }, text }`                          |
 * | anything else             | the Cloud API type name    | none: unknown to 2.13's fixed list, so `message` is `{}`    |
 */

export function userJid(waId: string): string {
  return `${waId}@s.whatsapp.net`;
}

export function toReceivedMessage(message: WebhookMessage, pushName: string): ReceivedMessage {
  const remoteJid = userJid(message.from);
  const base = {
    externalId: message.id,
    remoteJid,
    fromMe: false,
    pushName,
    timestamp: seconds(message.timestamp),
    // The Cloud API does not say which client the contact used.
    source: 'unknown' as const,
    isAiMessage: false,
  };
  const context = contextOf(message);
  const mapped = mapContent(message, remoteJid);
  const received: ReceivedMessage = { ...base, messageType: mapped.messageType, node: mapped.node };
  if (mapped.text !== undefined) received.text = mapped.text;
  if (mapped.media) received.media = mapped.media;
  if (context) received.contextInfo = context;
  return received;
}

interface Mapped {
  messageType: string;
  node: Record<string, unknown>;
  text?: string;
  media?: ReceivedMessage['media'];
}

function mapContent(message: WebhookMessage, remoteJid: string): Mapped {
  switch (message.type) {
    case 'text': {
      const text = message.text?.body ?? '';
      return { messageType: 'conversation', node: { conversation: text }, text };
    }
    case 'image':
      return withMedia('imageMessage', message.image, { caption: message.image?.caption });
    case 'video':
      return withMedia('videoMessage', message.video, { caption: message.video?.caption });
    case 'audio':
      return withMedia('audioMessage', message.audio, { ptt: message.audio?.voice === true });
    case 'document':
      return withMedia('documentMessage', message.document, { fileName: message.document?.filename, caption: message.document?.caption });
    case 'sticker':
      return withMedia('stickerMessage', message.sticker, { isAnimated: message.sticker?.animated });
    case 'location': {
      const location = message.location ?? {};
      return {
        messageType: 'locationMessage',
        node: compact({
          degreesLatitude: location.latitude,
          degreesLongitude: location.longitude,
          name: location.name,
          address: location.address,
          url: location.url,
        }),
      };
    }
    case 'contacts': {
      const cards = message.contacts ?? [];
      if (cards.length === 1) return { messageType: 'contactMessage', node: { displayName: displayNameOf(cards[0]!), vcard: toVcard(cards[0]!) } };
      return {
        messageType: 'contactsArrayMessage',
        node: {
          displayName: `${cards.length} contacts`,
          contacts: cards.map((card) => ({ displayName: displayNameOf(card), vcard: toVcard(card) })),
        },
      };
    }
    case 'interactive':
      return mapInteractive(message);
    case 'button':
      // A quick-reply tap on a template (also a carousel card button; spec 6.1: `selectedId` is the payload sent).
      return {
        messageType: 'templateButtonReplyMessage',
        node: compact({ selectedId: message.button?.payload ?? message.button?.text ?? '', selectedDisplayText: message.button?.text }),
      };
    case 'reaction':
      // The emoji is absent when the contact removed their reaction.
      return {
        messageType: 'reactionMessage',
        node: { key: compact({ id: message.reaction?.message_id, remoteJid }), text: message.reaction?.emoji ?? '' },
      };
    default:
      // `unsupported`, `system`, `order`, `request_welcome`, …: not in 2.13's fixed list.
      return { messageType: message.type || 'unknown', node: {} };
  }
}

function mapInteractive(message: WebhookMessage): Mapped {
  const interactive = message.interactive ?? {};
  switch (interactive.type) {
    case 'button_reply':
      return {
        messageType: 'buttonsResponseMessage',
        node: compact({ selectedButtonId: interactive.button_reply?.id, selectedDisplayText: interactive.button_reply?.title }),
      };
    case 'list_reply':
      return {
        messageType: 'listResponseMessage',
        node: compact({
          title: interactive.list_reply?.title,
          description: interactive.list_reply?.description,
          singleSelectReply: { selectedRowId: interactive.list_reply?.id },
        }),
      };
    case 'nfm_reply':
      // A Flow submission (spec 6.1): `paramsJson` is the `response_json` string, to be parsed by the reader.
      return {
        messageType: 'interactiveResponseMessage',
        node: { nativeFlowResponseMessage: { name: interactive.nfm_reply?.name ?? 'flow', paramsJson: interactive.nfm_reply?.response_json ?? '{}' } },
      };
    default:
      return { messageType: 'interactive', node: {} };
  }
}

function withMedia(messageType: string, media: WebhookMedia | undefined, fields: Record<string, unknown>): Mapped {
  const mapped: Mapped = { messageType, node: compact(fields) };
  // Spec 2.13: media is referenceable "on an official connection only when the provider returned a media id".
  if (media?.id) {
    mapped.media = { ref: media.id, mimetype: media.mime_type ?? 'application/octet-stream' };
    if (media.filename) mapped.media.fileName = media.filename;
  } else if (media?.mime_type) {
    // Not referenceable (no `downloadMediaUrl`), but what it is still belongs in the node.
    mapped.node.mimetype = media.mime_type;
  }
  return mapped;
}

/** A reply quotes `context.id`; a forwarded message has a context without an id, and no contextInfo. */
function contextOf(message: WebhookMessage): ContextInfo | undefined {
  const id = message.context?.id;
  if (!id) return undefined;
  const context: ContextInfo = { stanzaId: id };
  if (message.context?.from) context.participant = userJid(message.context.from);
  return context;
}

/** Provider timestamps are strings of seconds; 2.1 wants integer seconds. */
function seconds(timestamp: string | number | undefined): number {
  const value = typeof timestamp === 'number' ? timestamp : Number.parseInt(timestamp ?? '', 10);
  return Number.isFinite(value) ? Math.floor(value) : 0;
}

function compact(object: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(object)) if (object[key] === undefined) delete object[key];
  return object;
}
