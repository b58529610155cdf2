import { badRequest } from '../../../core/shared/errors.ts';
import type { MessageSource, ReceivedMessage } from '../../../core/messaging/incoming.ts';
import { normalizeRecipient } from '../../../core/messaging/outgoing.ts';

/** What a simulated contact sends (the body of `POST …/sandbox/messages`). */
export interface SimulatedMessage {
  from: string;
  pushName?: string;
  /** A 2.13 messageType; any other value simulates a type the fixed list does not know. */
  type?: string;
  text?: string;
  /** Fields of the message node (caption, degreesLatitude, selectedId, …). */
  node?: Record<string, unknown>;
  media?: { base64: string; mimetype: string; fileName?: string };
  /** Network id of the message this one replies to. */
  replyTo?: string;
  mentions?: string[];
  album?: { id: string; index: number };
  isAiMessage?: boolean;
  source?: MessageSource;
  /** The account itself sent it (typed on the phone): published as `send.message`. */
  fromMe?: boolean;
  /** Choose the network id (to replay a delivery); a new one otherwise. */
  externalId?: string;
  timestamp?: number;
}

/** Builds what the network would deliver for a simulated contact's message. */
export function simulatedMessage(input: SimulatedMessage, now: Date): ReceivedMessage {
  const number = normalizeRecipient(input.from, 'body.from');
  const remoteJid = number.includes('@') ? number : `${number}@s.whatsapp.net`;
  const type = input.type ?? 'conversation';
  if (type === 'conversation' && !input.text) throw badRequest(['body.text is required for a conversation message']);
  const isMedia = ['imageMessage', 'videoMessage', 'audioMessage', 'documentMessage', 'stickerMessage'].includes(type);
  if (input.media && !isMedia) throw badRequest([`body.media only goes with a media type, not ${type}`]);
  if (input.media) {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(input.media.base64)) throw badRequest(['body.media.base64 must be base64']);
  }
  const externalId = input.externalId ?? `SANDBOX.IN.${crypto.randomUUID().replace(/-/g, '').toUpperCase()}`;
  return {
    externalId,
    remoteJid,
    fromMe: input.fromMe ?? false,
    pushName: input.pushName ?? 'Sandbox Contact',
    messageType: type,
    node: { ...(type === 'conversation' ? {} : input.node ?? {}), ...(input.text && type !== 'conversation' ? { caption: input.text } : {}) },
    text: type === 'conversation' ? input.text : undefined,
    timestamp: input.timestamp ?? Math.floor(now.getTime() / 1000),
    source: input.source ?? 'android',
    isAiMessage: input.isAiMessage ?? false,
    contextInfo: input.replyTo || input.mentions?.length ? { stanzaId: input.replyTo, mentionedJid: input.mentions } : undefined,
    album: input.album,
    media: input.media
      ? { ref: `data:${input.media.mimetype};base64,${input.media.base64}`, mimetype: input.media.mimetype, fileName: input.media.fileName }
      : undefined,
  };
}
