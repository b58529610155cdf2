/**
 * An incoming chat message in the closed shape of spec 2.13: the `data` of `messages.upsert`
 * and `send.message`. Every driver normalizes what its network sends into this.
 */
export type MessageSource = 'android' | 'ios' | 'web' | 'unknown';

export interface ContextInfo {
  /** Id of the quoted message, when this is a reply. */
  stanzaId?: string;
  participant?: string;
  quotedMessage?: Record<string, unknown>;
  mentionedJid?: string[];
}

export interface IncomingMessageData {
  key: { id: string; remoteJid: string; fromMe: boolean };
  pushName: string;
  status: string;
  messageType: string;
  message: Record<string, unknown>;
  messageTimestamp: number;
  source: MessageSource;
  isAiMessage: boolean;
  contextInfo?: ContextInfo | null;
  aiMessageSource?: string;
  album?: { id: string; index: number };
}

/** The nodes of 2.13's fixed list: any other `messageType` carries an empty `message`. */
export const KNOWN_MESSAGE_TYPES = [
  'conversation',
  'imageMessage',
  'videoMessage',
  'audioMessage',
  'documentMessage',
  'stickerMessage',
  'albumMessage',
  'locationMessage',
  'contactMessage',
  'contactsArrayMessage',
  'pollCreationMessage',
  'pollUpdateMessage',
  'buttonsResponseMessage',
  'listResponseMessage',
  'templateButtonReplyMessage',
  'interactiveResponseMessage',
  'reactionMessage',
] as const;
export type KnownMessageType = (typeof KNOWN_MESSAGE_TYPES)[number];

export const MEDIA_MESSAGE_TYPES = ['imageMessage', 'videoMessage', 'audioMessage', 'documentMessage', 'stickerMessage'] as const;

/** The constant naming the network business's native AI in `aiMessageSource`. */
export const NATIVE_AI_SOURCE = 'META_AI';

/** What a driver hands over for one received message, before the service adds its own links. */
export interface ReceivedMessage {
  externalId: string;
  remoteJid: string;
  fromMe: boolean;
  pushName: string;
  messageType: string;
  /** The node's fields (for `conversation`, `{ conversation: text }` is built from `text`). */
  node: Record<string, unknown>;
  text?: string;
  timestamp: number;
  source: MessageSource;
  isAiMessage: boolean;
  contextInfo?: ContextInfo;
  album?: { id: string; index: number };
  /** Present when the message carries media the service can fetch from the driver. */
  media?: { ref: string; mimetype: string; fileName?: string };
  /**
   * On a message the account sent (`fromMe`): our own message id, when the network id is one
   * the service chose before sending. Lets an echo settle a send still PENDING here.
   */
  clientMessageId?: string;
}

/**
 * Builds the closed 2.13 shape: the always-present keys, conditional keys only when they
 * apply (absent, not null), an empty node for a type outside the fixed list, and the signed
 * `downloadMediaUrl` inside the node when the media is referenceable.
 */
export function toMessageData(received: ReceivedMessage, options: { status?: string; downloadMediaUrl?: string } = {}): IncomingMessageData {
  const data: IncomingMessageData = {
    key: { id: received.externalId, remoteJid: received.remoteJid, fromMe: received.fromMe },
    pushName: received.pushName,
    status: options.status ?? 'DELIVERY_ACK',
    messageType: received.messageType,
    message: messageNode(received, options.downloadMediaUrl),
    messageTimestamp: Math.floor(received.timestamp),
    source: received.source,
    isAiMessage: received.isAiMessage,
  };
  if (received.contextInfo && hasContext(received.contextInfo)) data.contextInfo = received.contextInfo;
  if (received.isAiMessage) data.aiMessageSource = NATIVE_AI_SOURCE;
  if (received.album) data.album = received.album;
  return data;
}

export function isKnownMessageType(type: string): type is KnownMessageType {
  return (KNOWN_MESSAGE_TYPES as readonly string[]).includes(type);
}

function messageNode(received: ReceivedMessage, downloadMediaUrl: string | undefined): Record<string, unknown> {
  if (!isKnownMessageType(received.messageType)) return {};
  if (received.messageType === 'conversation') return { conversation: received.text ?? String(received.node.conversation ?? '') };
  const node: Record<string, unknown> = { ...received.node };
  if (received.media) {
    node.mimetype = received.media.mimetype;
    if (received.media.fileName) node.fileName = received.media.fileName;
  }
  if (downloadMediaUrl) node.downloadMediaUrl = downloadMediaUrl;
  return { [received.messageType]: node };
}

function hasContext(context: ContextInfo): boolean {
  return Boolean(context.stanzaId || (context.mentionedJid && context.mentionedJid.length > 0));
}
