import { badRequest } from '../shared/errors.ts';
import { assertOutboundAllowed, type OutboundPolicy } from '../shared/outbound-policy.ts';

/**
 * What can be sent (spec 4.3 names the kinds; their fields are ours). A send request carries
 * `to` and exactly one content field; the field's name is the message kind.
 */
export const OUTGOING_KINDS = [
  'text',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'location',
  'contacts',
  'list',
  'buttons',
  'reaction',
  'template',
] as const;
/** `flow` is sent only through `send-flow` (the flows plugin), never as a field of a plain send. */
export type OutgoingKind = (typeof OUTGOING_KINDS)[number] | 'flow';

/** Media by public URL or by the id of an upload (`POST /v3/connections/media/uploads/{ticket}`). */
export interface MediaSource {
  url?: string;
  mediaId?: string;
  mimetype?: string;
}

export type OutgoingContent =
  | { kind: 'text'; text: string; previewUrl?: boolean }
  | { kind: 'image'; image: MediaSource & { caption?: string } }
  | { kind: 'video'; video: MediaSource & { caption?: string } }
  | { kind: 'audio'; audio: MediaSource & { voiceNote?: boolean } }
  | { kind: 'document'; document: MediaSource & { fileName?: string; caption?: string } }
  | { kind: 'sticker'; sticker: MediaSource }
  | { kind: 'location'; location: { latitude: number; longitude: number; name?: string; address?: string } }
  | { kind: 'contacts'; contacts: Array<{ name: string; phones: string[]; emails?: string[]; organization?: string }> }
  | {
      kind: 'list';
      list: {
        body: string;
        buttonText: string;
        header?: string;
        footer?: string;
        sections: Array<{ title: string; rows: Array<{ id: string; title: string; description?: string }> }>;
      };
    }
  | { kind: 'buttons'; buttons: { body: string; header?: string; footer?: string; buttons: Array<{ id: string; title: string }> } }
  | { kind: 'reaction'; reaction: { messageId: string; emoji: string } }
  | { kind: 'template'; template: { name: string; language: string; components?: unknown[] } }
  | { kind: 'flow'; flow: FlowContent };

/** An interactive Flow message (spec 4.3 `send-flow`); official connections only. */
export interface FlowContent {
  flowId: string;
  flowToken: string;
  flowAction: 'navigate' | 'data_exchange';
  body: string;
  cta: string;
  header?: string;
  footer?: string;
  /** The first screen (`navigate`), with its optional data. */
  screen?: string;
  data?: Record<string, unknown>;
  /** `published` (default) or `draft`. */
  mode?: 'published' | 'draft';
}

/** An outgoing message ready for a driver: recipient, content, optional quoted message. */
export interface OutgoingMessage {
  to: string;
  content: OutgoingContent;
  /** Network id of the message this one replies to. */
  replyToExternalId?: string;
  /**
   * The service's id for this send. Drivers whose network accepts a client-chosen message id
   * use it, so a send retried after a crash is recognised instead of sent twice.
   */
  clientMessageId?: string;
}

export const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

export function isMediaKind(kind: OutgoingKind): kind is MediaKind {
  return (MEDIA_KINDS as readonly string[]).includes(kind);
}

/**
 * Reads the content of a send request: exactly one content field, each field checked; every
 * problem is reported at once.
 */
export function parseOutgoingContent(body: Record<string, unknown>): OutgoingContent {
  const present = OUTGOING_KINDS.filter((kind) => body[kind] !== undefined && body[kind] !== null);
  if (present.length !== 1) {
    throw badRequest([
      present.length === 0
        ? `body must contain one message field: ${OUTGOING_KINDS.join(', ')}`
        : `body must contain exactly one message field, got ${present.join(', ')}`,
    ]);
  }
  const kind = present[0]!;
  const problems: string[] = [];
  const value = body[kind] as any;
  switch (kind) {
    case 'text':
      if (typeof value !== 'string' || !value.trim()) problems.push('body.text must be a non-empty string');
      else if (value.length > 4096) problems.push('body.text must be at most 4096 characters');
      break;
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker':
      checkMedia(kind, value, problems);
      break;
    case 'location':
      if (objectAt(value, 'body.location', problems)) {
        if (!isNumberIn(value.latitude, -90, 90)) problems.push('body.location.latitude must be a number from -90 to 90');
        if (!isNumberIn(value.longitude, -180, 180)) problems.push('body.location.longitude must be a number from -180 to 180');
      }
      break;
    case 'contacts':
      if (!Array.isArray(value) || value.length === 0) problems.push('body.contacts must be a non-empty array');
      else
        value.forEach((c: any, i: number) => {
          if (!isObject(c) || typeof c.name !== 'string' || !c.name.trim()) problems.push(`body.contacts.${i}.name must be a non-empty string`);
          if (!isObject(c) || !Array.isArray(c.phones) || c.phones.length === 0 || !c.phones.every((p: unknown) => typeof p === 'string'))
            problems.push(`body.contacts.${i}.phones must be a non-empty array of strings`);
        });
      break;
    case 'list':
      if (objectAt(value, 'body.list', problems)) {
        if (!nonEmpty(value.body)) problems.push('body.list.body must be a non-empty string');
        if (!nonEmpty(value.buttonText)) problems.push('body.list.buttonText must be a non-empty string');
        if (!Array.isArray(value.sections) || value.sections.length === 0 || value.sections.length > 10) problems.push('body.list.sections must hold 1 to 10 sections');
        else {
          const rows = value.sections.flatMap((s: any) => (isObject(s) && Array.isArray(s.rows) ? s.rows : []));
          if (rows.length === 0 || rows.length > 10) problems.push('body.list.sections must hold 1 to 10 rows in all');
          if (rows.some((r: any) => !isObject(r) || !nonEmpty(r.id) || !nonEmpty(r.title))) problems.push('body.list rows need an id and a title');
          if (new Set(rows.map((r: any) => r?.id)).size !== rows.length) problems.push('body.list row ids must be unique');
        }
      }
      break;
    case 'buttons':
      if (objectAt(value, 'body.buttons', problems)) {
        if (!nonEmpty(value.body)) problems.push('body.buttons.body must be a non-empty string');
        if (!Array.isArray(value.buttons) || value.buttons.length < 1 || value.buttons.length > 3) problems.push('body.buttons.buttons must hold 1 to 3 buttons');
        else {
          if (value.buttons.some((b: any) => !isObject(b) || !nonEmpty(b.id) || !nonEmpty(b.title))) problems.push('body.buttons.buttons need an id and a title');
          if (value.buttons.some((b: any) => typeof b?.title === 'string' && b.title.length > 20)) problems.push('body.buttons.buttons titles must be at most 20 characters');
        }
      }
      break;
    case 'reaction':
      if (!isObject(value) || !nonEmpty(value.messageId)) problems.push('body.reaction.messageId must be the id of a message in this chat');
      if (!isObject(value) || typeof value.emoji !== 'string') problems.push('body.reaction.emoji must be a string (empty removes the reaction)');
      break;
    case 'template':
      if (objectAt(value, 'body.template', problems)) {
        if (!nonEmpty(value.name)) problems.push('body.template.name must be a non-empty string');
        if (!nonEmpty(value.language)) problems.push('body.template.language must be a language code such as en_US');
        if (value.components !== undefined && !Array.isArray(value.components)) problems.push('body.template.components must be an array');
      }
      break;
  }
  if (problems.length > 0) throw badRequest(problems);
  return { kind, [kind]: value } as OutgoingContent;
}

/**
 * `+55 (11) 99999-9999` → `5511999999999`; group and other JIDs pass as they are. `field` names
 * where the caller wrote it (`body.to`, `query.chat`) in the 400.
 */
export function normalizeRecipient(to: unknown, field = 'body.to'): string {
  if (typeof to !== 'string' || !to.trim()) throw badRequest([`${field} must be a phone number in international format`]);
  const value = to.trim();
  if (value.includes('@')) {
    if (!/^[0-9A-Za-z.:_-]+@(s\.whatsapp\.net|g\.us|lid|newsletter)$/.test(value)) throw badRequest([`${field} is not a valid chat id`]);
    return value;
  }
  const digits = value.replace(/[\s().-]/g, '').replace(/^\+/, '').replace(/^00/, '');
  if (!/^[1-9]\d{6,14}$/.test(digits)) throw badRequest([`${field} must be a phone number in international format (E.164), such as +5511999999999`]);
  return digits;
}

/**
 * The outbound policy's check of a media `url` send (400 naming the rule). Entry points call it
 * before the send's transaction: it may resolve a name.
 */
export async function assertOutboundMedia(policy: OutboundPolicy, field: string, content: OutgoingContent): Promise<void> {
  if (!isMediaKind(content.kind)) return;
  const url = ((content as Record<string, any>)[content.kind] as { url?: unknown } | undefined)?.url;
  if (typeof url === 'string') await assertOutboundAllowed(policy, `${field}.${content.kind}.url`, url);
}

function checkMedia(kind: MediaKind, value: any, problems: string[]): void {
  if (!isObject(value)) {
    problems.push(`body.${kind} must be an object with url or mediaId`);
    return;
  }
  const sources = [value.url, value.mediaId].filter((s) => s !== undefined);
  if (sources.length !== 1) problems.push(`body.${kind} must have exactly one of url or mediaId`);
  if (value.url !== undefined && !isHttpUrl(value.url)) problems.push(`body.${kind}.url must be an http(s) URL`);
  if (value.mediaId !== undefined && !nonEmpty(value.mediaId)) problems.push(`body.${kind}.mediaId must be a non-empty string`);
}

/** Whether `value` is an object; when not, says so of `path`. */
function objectAt(value: unknown, path: string, problems: string[]): value is Record<string, any> {
  if (isObject(value)) return true;
  problems.push(`${path} must be an object`);
  return false;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.trim().length > 0;
}

function isNumberIn(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
