import { getDevice, isJidMetaAI, type WAMessage } from 'baileys';
import type { ContextInfo, MessageSource, ReceivedMessage } from '../../../core/messaging/incoming.ts';

/**
 * Pure mapping of what Baileys emits (a `WAMessage`, the protobuf `WebMessageInfo` plus key
 * extras) to the core's `ReceivedMessage`, from which `toMessageData` builds the closed shape of
 * spec 2.13.
 *
 * - Wrappers (disappearing, view-once, document-with-caption, edited, album child, bot invoke,
 *   future-proof poll/sticker) are unwrapped; the innermost content names the `messageType`.
 * - `extendedTextMessage` is a `conversation` with its text (it only adds a preview or a reply).
 * - Each node keeps the fields a reader can use, as JSON: media keys, CDN paths, hashes and
 *   thumbnails never leave the driver (the media is fetched through `fetchMedia`).
 * - `contextInfo` only for a reply or mentions; `album` only when the network sent the
 *   association; `source` from the shape of the message id.
 */

/** Contents Baileys wraps around the real one. */
const WRAPPERS = [
  'ephemeralMessage',
  'viewOnceMessage',
  'viewOnceMessageV2',
  'viewOnceMessageV2Extension',
  'documentWithCaptionMessage',
  'editedMessage',
  'associatedChildMessage',
  'botInvokeMessage',
  'groupStatusMessage',
  'groupStatusMessageV2',
  'lottieStickerMessage',
  'pollCreationMessageV4',
] as const;
const VIEW_ONCE_WRAPPERS = new Set(['viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension']);

/** Contents that are not messages of their own: never reported. */
const NOT_CONTENT = new Set(['messageContextInfo', 'senderKeyDistributionMessage', 'protocolMessage', 'deviceSentMessage']);

/** Network types reported under the name of the 2.13 node they are a variant of. */
const ALIASES: Record<string, string> = {
  extendedTextMessage: 'conversation',
  pollCreationMessageV2: 'pollCreationMessage',
  pollCreationMessageV3: 'pollCreationMessage',
  pollCreationMessageV5: 'pollCreationMessage',
  ptvMessage: 'videoMessage',
  liveLocationMessage: 'locationMessage',
};

const DEFAULT_MIMETYPES: Record<string, string> = {
  imageMessage: 'image/jpeg',
  videoMessage: 'video/mp4',
  audioMessage: 'audio/ogg; codecs=opus',
  documentMessage: 'application/octet-stream',
  stickerMessage: 'image/webp',
};

/** Node fields kept per 2.13 type (media types get `mimetype`/`fileName` from `media`). */
const NODE_FIELDS: Record<string, readonly string[]> = {
  imageMessage: ['caption', 'width', 'height', 'fileLength', 'viewOnce'],
  videoMessage: ['caption', 'seconds', 'width', 'height', 'gifPlayback', 'fileLength', 'viewOnce'],
  audioMessage: ['seconds', 'ptt', 'fileLength', 'viewOnce'],
  documentMessage: ['caption', 'title', 'pageCount', 'fileLength'],
  stickerMessage: ['isAnimated', 'isAvatar', 'width', 'height', 'fileLength'],
  albumMessage: ['expectedImageCount', 'expectedVideoCount'],
  locationMessage: ['degreesLatitude', 'degreesLongitude', 'name', 'address', 'url', 'comment', 'caption', 'accuracyInMeters'],
  contactMessage: ['displayName', 'vcard'],
  contactsArrayMessage: ['displayName', 'contacts'],
  pollCreationMessage: ['name', 'options', 'selectableOptionsCount'],
  pollUpdateMessage: ['pollCreationMessageKey', 'senderTimestampMs'],
  buttonsResponseMessage: ['selectedButtonId', 'selectedDisplayText', 'type'],
  listResponseMessage: ['title', 'description', 'listType', 'singleSelectReply'],
  templateButtonReplyMessage: ['selectedId', 'selectedDisplayText', 'selectedIndex', 'selectedCarouselCardIndex'],
  interactiveResponseMessage: ['body', 'nativeFlowResponseMessage'],
  reactionMessage: ['key', 'text', 'senderTimestampMs'],
};

const MEDIA_TYPES = new Set(['imageMessage', 'videoMessage', 'audioMessage', 'documentMessage', 'stickerMessage']);

/** `MessageAssociation.AssociationType.MEDIA_ALBUM`. */
const MEDIA_ALBUM = 1;

export interface Unwrapped {
  /** The network's own name of the innermost content (`extendedTextMessage`, `imageMessage`, ...). */
  networkType: string | undefined;
  content: Record<string, any>;
  node: Record<string, any> | undefined;
  /** `messageContextInfo` of every level, outermost first. */
  messageContextInfos: Array<Record<string, any>>;
  viewOnce: boolean;
  botInvoked: boolean;
}

/** Peels the wrappers off a message's content and names what is inside. */
export function unwrapContent(message: Record<string, any> | null | undefined): Unwrapped {
  let content: Record<string, any> = message ?? {};
  const messageContextInfos: Array<Record<string, any>> = [];
  let viewOnce = false;
  let botInvoked = false;
  for (let depth = 0; depth < 8; depth++) {
    if (isObject(content.messageContextInfo)) messageContextInfos.push(content.messageContextInfo);
    const wrapper = WRAPPERS.find((name) => isObject(content[name]) && isObject(content[name].message));
    if (!wrapper) break;
    if (VIEW_ONCE_WRAPPERS.has(wrapper)) viewOnce = true;
    if (wrapper === 'botInvokeMessage') botInvoked = true;
    content = content[wrapper].message;
  }
  const networkType = Object.keys(content).find(
    (key) => (key === 'conversation' || /Message(V\d+)?$/.test(key)) && !NOT_CONTENT.has(key) && content[key] !== null && content[key] !== undefined,
  );
  const node = networkType && isObject(content[networkType]) ? content[networkType] : undefined;
  return { networkType, content, node, messageContextInfos, viewOnce, botInvoked };
}

/** Whether Baileys emitted something that is not a chat message of its own (a protocol or key-distribution message, a status post, a group notice). */
export function isReportable(msg: WAMessage): boolean {
  if (!msg.key?.id || !msg.key.remoteJid) return false;
  if (msg.key.remoteJid === 'status@broadcast') return false;
  const { networkType } = unwrapContent(msg.message as Record<string, any> | null | undefined);
  return networkType !== undefined;
}

/** Whether the message carries media that `downloadMediaMessage` can fetch. */
export function hasMedia(msg: WAMessage): boolean {
  const { networkType, node } = unwrapContent(msg.message as Record<string, any> | null | undefined);
  if (!networkType || !node) return false;
  const type = ALIASES[networkType] ?? networkType;
  return MEDIA_TYPES.has(type) && (typeof node.directPath === 'string' || typeof node.url === 'string');
}

/** The album a media message belongs to, when the network sent the association. */
export function albumOf(msg: WAMessage): { id: string; index: number | undefined } | undefined {
  const { messageContextInfos } = unwrapContent(msg.message as Record<string, any> | null | undefined);
  for (const info of messageContextInfos) {
    const association = info.messageAssociation;
    if (!isObject(association)) continue;
    const type = association.associationType;
    if (type !== MEDIA_ALBUM && type !== 'MEDIA_ALBUM') continue;
    const parentId = association.parentMessageKey?.id;
    if (typeof parentId !== 'string' || !parentId) continue;
    const index = association.messageIndex;
    return { id: parentId, index: index === null || index === undefined ? undefined : toNumber(index) };
  }
  return undefined;
}

/**
 * Maps one message; `undefined` for what is not reported as a message (see `isReportable`).
 * `albumIndex` stands in for the position when the network names the album but not the
 * position (the driver counts the album's items seen so far).
 */
export function mapIncoming(msg: WAMessage, options: { albumIndex?: number } = {}): ReceivedMessage | undefined {
  if (!isReportable(msg)) return undefined;
  const key = msg.key;
  const unwrapped = unwrapContent(msg.message as Record<string, any>);
  const networkType = unwrapped.networkType!;
  const messageType = ALIASES[networkType] ?? networkType;
  const raw = unwrapped.node;

  const received: ReceivedMessage = {
    externalId: key.id!,
    remoteJid: chatJid(key),
    fromMe: key.fromMe === true,
    pushName: typeof msg.pushName === 'string' ? msg.pushName : '',
    messageType,
    node: {},
    timestamp: toNumber(msg.messageTimestamp) ?? 0,
    source: sourceOf(key.id!),
    isAiMessage: isAiMessage(msg, unwrapped),
  };

  if (messageType === 'conversation') {
    const text = networkType === 'conversation' ? unwrapped.content.conversation : raw?.text;
    received.text = typeof text === 'string' ? text : '';
    received.node = { conversation: received.text };
  } else if (raw && NODE_FIELDS[messageType]) {
    received.node = nodeOf(messageType, raw);
    if (networkType === 'ptvMessage') received.node.ptv = true;
    if (networkType === 'liveLocationMessage') received.node.isLive = true;
    if (unwrapped.viewOnce && MEDIA_TYPES.has(messageType)) received.node.viewOnce = true;
  }

  if (MEDIA_TYPES.has(messageType) && raw) {
    const fileName = typeof raw.fileName === 'string' && raw.fileName ? raw.fileName : undefined;
    received.media = {
      ref: key.id!,
      mimetype: typeof raw.mimetype === 'string' && raw.mimetype ? raw.mimetype : DEFAULT_MIMETYPES[messageType]!,
      ...(fileName && { fileName }),
    };
  }

  const context = raw ? contextOf(raw.contextInfo) : undefined;
  if (context) received.contextInfo = context;

  const album = albumOf(msg);
  if (album) received.album = { id: album.id, index: album.index ?? options.albumIndex ?? 0 };

  return received;
}

/** `android`, `ios`, `web` or `unknown`, guessed from the id the sending device chose. */
export function sourceOf(messageId: string): MessageSource {
  const device = getDevice(messageId);
  if (device === 'android' || device === 'ios' || device === 'web') return device;
  if (device === 'desktop') return 'web';
  return 'unknown';
}

/**
 * The chat of a message key: the phone-number JID when Baileys 7 reports a contact by LID and
 * knows the phone number (`remoteJidAlt`), otherwise the JID as it came.
 */
export function chatJid(key: { remoteJid?: string | null; remoteJidAlt?: string | null }): string {
  const jid = key.remoteJid ?? '';
  const alt = key.remoteJidAlt ?? undefined;
  if (jid.endsWith('@lid') && alt && alt.endsWith('@s.whatsapp.net')) return alt;
  return jid;
}

/**
 * The network business's native AI: the message is flagged as a first-party business bot or
 * support-AI message, comes from the Meta AI JID (`@bot`), or is our own message carrying bot
 * metadata (an answer the business AI sent on the account's behalf). Otherwise false. The
 * network documents none of these markers; they are read from its protocol definitions.
 */
function isAiMessage(msg: WAMessage, unwrapped: Unwrapped): boolean {
  if (msg.is1PBizBotMessage === true || msg.isSupportAiMessage === true) return true;
  const author = msg.key.participant || msg.participant || msg.key.remoteJid || undefined;
  if (msg.key.fromMe !== true && isJidMetaAI(author ?? undefined)) return true;
  const hasBotMetadata = unwrapped.messageContextInfos.some((info) => isObject(info.botMetadata));
  return msg.key.fromMe === true && (hasBotMetadata || unwrapped.botInvoked);
}

function nodeOf(type: string, raw: Record<string, any>): Record<string, unknown> {
  const node: Record<string, unknown> = {};
  for (const field of NODE_FIELDS[type] ?? []) {
    const value = raw[field];
    if (value === null || value === undefined) continue;
    node[field] = field === 'contacts' ? contactsOf(value) : field === 'options' ? pollOptionsOf(value) : plain(value);
  }
  if (type === 'pollUpdateMessage' && isObject(raw.vote)) {
    // Votes are encrypted with the poll's secret; passed on as the network sent them (base64).
    node.vote = plain(raw.vote, 'base64');
  }
  if (type === 'interactiveResponseMessage' && isObject(node.nativeFlowResponseMessage)) {
    const flow = node.nativeFlowResponseMessage as Record<string, unknown>;
    if (typeof flow.paramsJson !== 'string') flow.paramsJson = '{}';
  }
  return node;
}

function contactsOf(value: unknown): unknown {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((c) => {
    const contact: Record<string, unknown> = {};
    if (typeof c.displayName === 'string') contact.displayName = c.displayName;
    if (typeof c.vcard === 'string') contact.vcard = c.vcard;
    return contact;
  });
}

function pollOptionsOf(value: unknown): unknown {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((o) => ({ optionName: typeof o.optionName === 'string' ? o.optionName : '' }));
}

function contextOf(info: unknown): ContextInfo | undefined {
  if (!isObject(info)) return undefined;
  const stanzaId = typeof info.stanzaId === 'string' && info.stanzaId ? info.stanzaId : undefined;
  const mentionedJid = Array.isArray(info.mentionedJid) ? info.mentionedJid.filter((j: unknown): j is string => typeof j === 'string' && j !== '') : [];
  if (!stanzaId && mentionedJid.length === 0) return undefined;
  const context: ContextInfo = {};
  if (stanzaId) {
    context.stanzaId = stanzaId;
    if (typeof info.participant === 'string' && info.participant) context.participant = info.participant;
    if (isObject(info.quotedMessage)) context.quotedMessage = quotedOf(info.quotedMessage);
  }
  if (mentionedJid.length > 0) context.mentionedJid = mentionedJid;
  return context;
}

/** The quoted message, without its own context and without binary fields (keys, thumbnails). */
function quotedOf(message: Record<string, any>): Record<string, unknown> {
  const copy = plain(message) as Record<string, any>;
  for (const value of Object.values(copy)) {
    if (isObject(value)) {
      delete value.contextInfo;
      for (const secret of ['mediaKey', 'directPath', 'url', 'mediaKeyTimestamp', 'thumbnailDirectPath', 'staticUrl']) delete value[secret];
    }
  }
  delete copy.messageContextInfo;
  return copy;
}

/**
 * A JSON-safe copy of protobuf data: Longs become numbers, binary is dropped (or base64 with
 * `binary: 'base64'`), functions and undefined disappear.
 */
export function plain(value: unknown, binary: 'drop' | 'base64' = 'drop'): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (value instanceof Uint8Array) return binary === 'base64' ? Buffer.from(value).toString('base64') : undefined;
  if (isBufferJson(value)) return binary === 'base64' ? (value as any).data : undefined;
  if (isLong(value)) return toNumber(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((v) => plain(v, binary)).filter((v) => v !== undefined);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const p = plain(v, binary);
    if (p !== undefined) out[k] = p;
  }
  return out;
}

/** Seconds (or any protobuf integer) as a number: numbers, numeric strings, Longs, bigints. */
export function toNumber(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : undefined;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') {
    const n = Number(value);
    return Number.isFinite(n) ? Math.trunc(n) : undefined;
  }
  if (isObject(value)) {
    if (typeof value.toNumber === 'function') return value.toNumber();
    if (typeof value.low === 'number' && typeof value.high === 'number') {
      const low = value.low >>> 0;
      const high = value.unsigned ? value.high >>> 0 : value.high | 0;
      return high * 4294967296 + low;
    }
  }
  return undefined;
}

function isLong(value: object): boolean {
  const v = value as Record<string, unknown>;
  return typeof v.low === 'number' && typeof v.high === 'number' && Object.keys(v).every((k) => k === 'low' || k === 'high' || k === 'unsigned');
}

function isBufferJson(value: object): boolean {
  const v = value as Record<string, unknown>;
  return v.type === 'Buffer' && typeof v.data === 'string' && Object.keys(v).length === 2;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}
