import { DriverError, type OutgoingMedia } from '../../../core/connections/driver.ts';
import type { FlowContent, MediaKind, MediaSource, OutgoingContent, OutgoingMessage } from '../../../core/messaging/outgoing.ts';

/**
 * Outgoing messages as Cloud API bodies for `POST /{phone-number-id}/messages`. Each body has
 * `messaging_product: "whatsapp"`, `recipient_type: "individual"`, `to`, `type` and the object
 * named by `type`; a reply carries `context: { message_id }`.
 */

/** How a media object points at its bytes: an uploaded media id, or a public link. */
export type MediaRef = { id: string } | { link: string };

/** `5511999999999` or `5511999999999@s.whatsapp.net` → `5511999999999`. */
export function recipientOf(to: string): string {
  const [user, server] = to.split('@');
  if (server !== undefined && server !== 's.whatsapp.net' && server !== 'c.us') {
    throw new DriverError(`The Cloud API sends to phone numbers only, not to ${to}`, 'UNSUPPORTED_RECIPIENT', false);
  }
  const digits = (user ?? '').replace(/[^\d]/g, '');
  if (!digits) throw new DriverError(`${to} is not a phone number`, 'UNSUPPORTED_RECIPIENT', false);
  return digits;
}

/**
 * Where the bytes of a media message come from, in order: bytes the service resolved (they
 * are uploaded first, see index.ts), a URL the service resolved, the content's own `mediaId`
 * (a Cloud API media id, such as the one `templates/send-media` returns; spec 4.3), the
 * content's own `url`.
 */
export function mediaSourceOf(content: OutgoingContent, media: OutgoingMedia | undefined): { upload: OutgoingMedia } | { ref: MediaRef } {
  if (media?.bytes) return { upload: media };
  if (media?.url) return { ref: { link: media.url } };
  const source = mediaOf(content);
  if (source?.mediaId) return { ref: { id: source.mediaId } };
  if (source?.url) return { ref: { link: source.url } };
  throw new DriverError(`The ${content.kind} message has no media (no bytes, url or mediaId)`, 'MEDIA_MISSING', false);
}

export function mediaOf(content: OutgoingContent): MediaSource | undefined {
  switch (content.kind) {
    case 'image':
      return content.image;
    case 'video':
      return content.video;
    case 'audio':
      return content.audio;
    case 'document':
      return content.document;
    case 'sticker':
      return content.sticker;
    default:
      return undefined;
  }
}

/** `biz_opaque_callback_data` holds at most 512 characters. */
export const BIZ_OPAQUE_MAX = 512;

/** The Graph body of a message; `media` is required for the media kinds. */
export function toGraphBody(message: OutgoingMessage, media?: MediaRef, fileName?: string): Record<string, unknown> {
  const { type, object } = contentObject(message.content, media, fileName);
  const body: Record<string, unknown> = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: recipientOf(message.to),
    type,
    [type]: object,
  };
  // Reactions point at their message themselves; every other kind may quote one.
  if (message.replyToExternalId && message.content.kind !== 'reaction') body.context = { message_id: message.replyToExternalId };
  // The platform does not read this string (at most 512 characters); it hands it back in every
  // `statuses[]` callback of the message (`sent`, `delivered`, `read`, `failed`). Carrying our own
  // message id lets a callback for a network id we never recorded (the worker died before
  // writing it) settle the send instead of leaving it to be sent again (core/messaging/settle.ts).
  if (message.clientMessageId && message.clientMessageId.length <= BIZ_OPAQUE_MAX) body.biz_opaque_callback_data = message.clientMessageId;
  return body;
}

function contentObject(content: OutgoingContent, media: MediaRef | undefined, fileName: string | undefined): { type: string; object: unknown } {
  switch (content.kind) {
    case 'text':
      return { type: 'text', object: compact({ body: content.text, preview_url: content.previewUrl }) };
    case 'image':
      return { type: 'image', object: compact({ ...requireMedia('image', media), caption: content.image.caption }) };
    case 'video':
      return { type: 'video', object: compact({ ...requireMedia('video', media), caption: content.video.caption }) };
    case 'audio':
      // `voice: true` sends a voice message (OGG/OPUS) instead of a basic audio file.
      return { type: 'audio', object: compact({ ...requireMedia('audio', media), voice: content.audio.voiceNote ? true : undefined }) };
    case 'document':
      return {
        type: 'document',
        object: compact({ ...requireMedia('document', media), filename: content.document.fileName ?? fileName, caption: content.document.caption }),
      };
    case 'sticker':
      return { type: 'sticker', object: { ...requireMedia('sticker', media) } };
    case 'location':
      return { type: 'location', object: compact({ ...content.location }) };
    case 'contacts':
      return { type: 'contacts', object: content.contacts.map(contactCard) };
    case 'list':
      return {
        type: 'interactive',
        object: interactiveObject('list', content.list, {
          button: content.list.buttonText,
          sections: content.list.sections.map((section) => ({
            title: section.title,
            rows: section.rows.map((row) => compact({ id: row.id, title: row.title, description: row.description })),
          })),
        }),
      };
    case 'buttons':
      return {
        type: 'interactive',
        object: interactiveObject('button', content.buttons, {
          buttons: content.buttons.buttons.map((button) => ({ type: 'reply', reply: { id: button.id, title: button.title } })),
        }),
      };
    case 'reaction':
      // An empty emoji removes the reaction.
      return { type: 'reaction', object: { message_id: content.reaction.messageId, emoji: content.reaction.emoji } };
    case 'template':
      // Components are sent as given: sending casing is lower (`header`, `button`, `quick_reply`; spec 4.3).
      return {
        type: 'template',
        object: compact({ name: content.template.name, language: { code: content.template.language }, components: content.template.components }),
      };
    case 'flow':
      return { type: 'interactive', object: flowObject(content.flow) };
  }
}

/** An interactive `flow` message: `action.name: "flow"` with its parameters (message version 3). */
function flowObject(flow: FlowContent): Record<string, unknown> {
  const payload = flow.flowAction === 'navigate' && flow.screen ? compact({ screen: flow.screen, data: flow.data }) : undefined;
  return interactiveObject('flow', flow, {
    name: 'flow',
    parameters: compact({
      flow_message_version: '3',
      flow_token: flow.flowToken,
      flow_id: flow.flowId,
      flow_cta: flow.cta,
      flow_action: flow.flowAction,
      mode: flow.mode === 'draft' ? 'draft' : undefined,
      flow_action_payload: payload,
    }),
  });
}

/** An interactive message of any kind: the text every kind frames it with (header, body, footer), then its action. */
function interactiveObject(type: string, text: { header?: string; body: string; footer?: string }, action: Record<string, unknown>): Record<string, unknown> {
  return compact({
    type,
    header: text.header ? { type: 'text', text: text.header } : undefined,
    body: { text: text.body },
    footer: text.footer ? { text: text.footer } : undefined,
    action,
  });
}

/** A contact card: `formatted_name` plus at least one other name part, as the API requires. */
function contactCard(contact: { name: string; phones: string[]; emails?: string[]; organization?: string }): Record<string, unknown> {
  const full = contact.name.trim().replace(/\s+/g, ' ');
  const space = full.indexOf(' ');
  const name = space === -1 ? { formatted_name: full, first_name: full } : { formatted_name: full, first_name: full.slice(0, space), last_name: full.slice(space + 1) };
  return compact({
    name,
    phones: contact.phones.map((phone) => ({ phone, type: 'CELL' })),
    emails: contact.emails?.length ? contact.emails.map((email) => ({ email, type: 'WORK' })) : undefined,
    org: contact.organization ? { company: contact.organization } : undefined,
  });
}

function requireMedia(kind: MediaKind, media: MediaRef | undefined): MediaRef {
  if (!media) throw new DriverError(`The ${kind} message has no media`, 'MEDIA_MISSING', false);
  return media;
}

/** Drops `undefined` fields, so optional parameters are absent rather than null. */
function compact<T extends Record<string, unknown>>(object: T): T {
  for (const key of Object.keys(object)) if (object[key] === undefined) delete object[key];
  return object;
}
