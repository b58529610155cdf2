import { DOWNLOAD_LINK_DAYS, type MediaLinkDeps } from '../../media/media.ts';
import { mediaKindOfType } from '../../media/media-limits.ts';
import type { MediaKind } from '../../messaging/outgoing.ts';
import { DomainError } from '../../shared/errors.ts';
import type { IdGen } from '../../shared/ports.ts';
import { signToken, verifyToken, type SignedPayload } from '../../shared/signed-token.ts';

/**
 * Files on helpdesk messages (spec 2.12 "fully hydrated", 4.5, 5.6). The bytes live in one
 * place: a connection's media item (received media, media uploaded through the connection
 * media API, an upload sent as a reply) or, for a file uploaded to a conversation and not sent
 * on a connection, the attachment itself. Links are signed, expiring, and need no API key.
 */
export interface Attachment {
  id: string;
  workspaceId: string;
  conversationId: string;
  /** Null while an upload waits to be put on a message. */
  messageId: string | null;
  /** The connection media item holding the bytes, when they live there. */
  mediaId: string | null;
  fileName: string;
  mimeType: string;
  size: number | null;
  uploadedBy: string | null;
  createdAt: Date;
}

/** An attachment as messages show it, in REST and in events. */
export interface MessageAttachment {
  id: string;
  fileName: string;
  mimeType: string;
  /** Null while unknown (received media whose bytes have not been fetched yet). */
  size: number | null;
  downloadUrl: string;
}

export interface AttachmentStore {
  insert(attachment: Attachment, bytes?: Uint8Array): Promise<void>;
  get(workspaceId: string, id: string): Promise<Attachment | undefined>;
  /** The attachments of these messages, by message id, oldest first, with fresh download links. */
  forMessages(messageIds: readonly string[]): Promise<Map<string, MessageAttachment[]>>;
  /** Puts uploads still on no message on this one; answers how many it took. */
  bind(ids: readonly string[], messageId: string): Promise<number>;
  /** The held bytes now live in this connection media item: the attachment points at it, keeping no copy. */
  moveToMedia(id: string, mediaId: string): Promise<void>;
  heldBytes(id: string): Promise<Uint8Array | undefined>;
  /** Forgets uploads not put on any message since before this time. */
  prunePending(before: Date): Promise<void>;
}

/** Same lifetime as connection media links (spec 2.13: 7 days). */
export const ATTACHMENT_LINK_DAYS = DOWNLOAD_LINK_DAYS;
/** An upload not put on a message within a day is forgotten. */
export const PENDING_UPLOAD_HOURS = 24;
export const FILE_NAME_MAX_LENGTH = 255;
const TOKEN_USE = 'helpdesk-attachment-download';

export function attachmentDownloadLink(deps: MediaLinkDeps, id: string): string {
  const exp = Math.floor(deps.clock.now().getTime() / 1000) + ATTACHMENT_LINK_DAYS * 86_400;
  const token = signToken(deps.signingKey, { use: TOKEN_USE, exp, attachmentId: id });
  return `${deps.publicUrl}/v3/helpdesk/messages/attachments/${id}/public/download?token=${encodeURIComponent(token)}`;
}

export function assertAttachmentToken(deps: Pick<MediaLinkDeps, 'clock' | 'signingKey'>, id: string, token: string | undefined): void {
  const payload = token ? verifyToken<SignedPayload & { attachmentId: string }>(deps.signingKey, token, TOKEN_USE, deps.clock.now()) : undefined;
  // One answer for forged, expired and misdirected links: nothing to learn from it.
  if (!payload || payload.attachmentId !== id) throw new DomainError('unauthenticated', 'The download link is invalid or has expired');
}

/** A file name safe in a header and on a disk: no path, no control characters, at most 255 characters. */
export function cleanFileName(raw: string | undefined | null, fallback: string): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const name = [...base.replace(/[\u0000-\u001f\u007f"]/g, '_').trim()].slice(0, FILE_NAME_MAX_LENGTH).join('');
  return name.length > 0 && name !== '.' && name !== '..' ? name : fallback;
}

/** `image/png` → `png`: a name for received media that came without one. */
export function defaultFileName(kind: string, mimeType: string): string {
  const subtype = (mimeType.split('/')[1] ?? 'bin').split(/[;+]/)[0]!.replace(/[^a-z0-9.-]/gi, '');
  const extension = subtype === 'jpeg' ? 'jpg' : subtype === 'mpeg' && mimeType.startsWith('audio/') ? 'mp3' : subtype || 'bin';
  return `${kind}.${extension}`;
}

/** How a file goes out on the network: by its media type. */
export function mediaKindOf(mimeType: string): MediaKind {
  return mediaKindOfType(mimeType);
}

/** The messages with their attachments (every message shows the field, empty when it has none). */
export async function withAttachments<M extends { id: string; attachments?: MessageAttachment[] }>(stores: { attachments: AttachmentStore }, messages: M[]): Promise<M[]> {
  if (messages.length === 0) return messages;
  const found = await stores.attachments.forMessages(messages.map((m) => m.id));
  return messages.map((m) => ({ ...m, attachments: found.get(m.id) ?? [] }));
}

/** A file that came with a contact's message (received media of the connection). */
export type IncomingAttachment = Pick<Attachment, 'mediaId' | 'fileName' | 'mimeType' | 'size'>;

/** Stores a contact's files on their (stored) message and answers the message as it is shown. */
export async function attachIncoming<M extends { id: string; workspaceId: string; conversationId: string; createdAt: Date; attachments?: MessageAttachment[] }>(
  stores: { attachments: AttachmentStore },
  deps: { ids: IdGen },
  message: M,
  files: readonly IncomingAttachment[] | undefined,
): Promise<M> {
  for (const file of files ?? []) {
    await stores.attachments.insert({ ...file, id: deps.ids.next(), workspaceId: message.workspaceId, conversationId: message.conversationId, messageId: message.id, uploadedBy: null, createdAt: message.createdAt });
  }
  return (await withAttachments(stores, [message]))[0]!;
}
