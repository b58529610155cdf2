import { badRequest, DomainError, notFound } from '../shared/errors.ts';
import type { Clock, IdGen } from '../shared/ports.ts';
import { signToken, verifyToken, type SignedPayload } from '../shared/signed-token.ts';
import type { MediaKind } from '../messaging/outgoing.ts';
import { assertMediaFits, assertMediaSize, LARGEST_MEDIA_LIMIT, MEDIA_LIMITS } from './media-limits.ts';

/** Media bytes the service holds: uploads to send, and media received from contacts. */
export interface MediaItem {
  id: string;
  workspaceId: string;
  connectionId: string;
  origin: 'upload' | 'received';
  /** The driver's own reference (provider media id, network message id) to fetch bytes later. */
  driverRef: string | null;
  mimetype: string;
  fileName: string | null;
  size: number | null;
  createdAt: Date;
}

export interface MediaStore {
  insert(item: MediaItem, bytes?: Uint8Array): Promise<void>;
  /** Items without bytes yet (received media, fetched later), in one write. */
  insertMany(items: readonly MediaItem[]): Promise<void>;
  get(id: string): Promise<MediaItem | undefined>;
  bytes(id: string): Promise<Uint8Array | undefined>;
  saveBytes(id: string, bytes: Uint8Array, mimetype: string): Promise<void>;
  /** Marks a ticket nonce used; false when it was used before (single use). */
  useTicket(nonce: string, expiresAt: Date): Promise<boolean>;
}

export const DOWNLOAD_LINK_DAYS = 7;
export const UPLOAD_TICKET_MINUTES = 10;
/** The absolute cap on media the service holds: the largest per-kind limit (media-limits.ts). */
export const MAX_MEDIA_BYTES = LARGEST_MEDIA_LIMIT;

export interface MediaLinkDeps {
  clock: Clock;
  signingKey: Uint8Array;
  publicUrl: string;
}

/** `downloadMediaUrl`: a signed link valid 7 days that streams the bytes without an API key. */
export function downloadLink(deps: MediaLinkDeps, mediaId: string): string {
  const exp = Math.floor(deps.clock.now().getTime() / 1000) + DOWNLOAD_LINK_DAYS * 86_400;
  const token = signToken(deps.signingKey, { use: 'media-download', exp, mediaId });
  return `${deps.publicUrl}/v3/connections/media/${mediaId}/download?token=${encodeURIComponent(token)}`;
}

export function assertDownloadToken(deps: MediaLinkDeps, mediaId: string, token: string | undefined): void {
  const payload = token ? verifyToken<SignedPayload & { mediaId: string }>(deps.signingKey, token, 'media-download', deps.clock.now()) : undefined;
  // Same answer for a forged, expired or misdirected link: nothing to learn from it.
  if (!payload || payload.mediaId !== mediaId) throw new DomainError('unauthenticated', 'The download link is invalid or has expired');
}

/** What an upload ticket allows: one media item of one kind, for one recipient on one connection. */
export interface UploadTicket extends SignedPayload<'media-upload'> {
  nonce: string;
  workspaceId: string;
  userId: string;
  connectionId: string;
  to: string;
  kind: MediaKind;
  caption?: string;
}

export function issueUploadTicket(
  deps: MediaLinkDeps & { ids: IdGen },
  claims: Omit<UploadTicket, 'use' | 'exp' | 'nonce'>,
): { ticketId: string; uploadUrl: string; expiresAt: Date } {
  const expiresAt = new Date(deps.clock.now().getTime() + UPLOAD_TICKET_MINUTES * 60_000);
  const ticket: UploadTicket = { ...claims, use: 'media-upload', exp: Math.floor(expiresAt.getTime() / 1000), nonce: deps.ids.next() };
  const ticketId = signToken(deps.signingKey, ticket);
  return { ticketId, uploadUrl: `${deps.publicUrl}/v3/connections/media/uploads/${ticketId}`, expiresAt };
}

/** The ticket's claims if it verifies, without using it (to bound the upload's read by its kind). */
export function peekUploadTicket(deps: MediaLinkDeps, ticketId: string): UploadTicket | undefined {
  return verifyToken<UploadTicket>(deps.signingKey, ticketId, 'media-upload', deps.clock.now());
}

/** The ticket's claims once; a second use, an expired or a forged ticket is refused. */
export async function redeemUploadTicket(deps: MediaLinkDeps, store: MediaStore, ticketId: string): Promise<UploadTicket> {
  const ticket = verifyToken<UploadTicket>(deps.signingKey, ticketId, 'media-upload', deps.clock.now());
  if (!ticket) throw new DomainError('unauthenticated', 'The upload ticket is invalid or has expired');
  if (!(await store.useTicket(ticket.nonce, new Date(ticket.exp * 1000)))) throw new DomainError('conflict', 'The upload ticket has already been used');
  return ticket;
}

/** An upload to be sent as `kind`: not empty, within the kind's size limit (413), of a matching type. */
export function assertUploadable(bytes: Uint8Array, mimetype: string, kind: MediaKind): void {
  if (bytes.length === 0) throw badRequest('The upload is empty');
  assertMediaFits(kind, bytes);
  const family = mimetype.split('/')[0];
  const expected: Record<MediaKind, (m: string, f: string | undefined) => boolean> = {
    image: (_m, f) => f === 'image',
    video: (_m, f) => f === 'video',
    audio: (_m, f) => f === 'audio',
    sticker: (m) => m === 'image/webp',
    document: () => true,
  };
  if (!expected[kind](mimetype, family)) throw badRequest(`A ${kind} upload cannot have content type ${mimetype}`);
}

export async function mediaOf(store: MediaStore, workspaceId: string, id: string): Promise<MediaItem> {
  const item = await store.get(id);
  if (!item || item.workspaceId !== workspaceId) throw notFound(`Media ${id} not found`);
  return item;
}

/**
 * A media item of the workspace that may be sent as `kind`: within the kind's size limit
 * (413 naming it). A sticker over the static limit is read to see whether it is animated;
 * an item whose size is not known yet (received media not fetched) is checked at delivery.
 */
export async function sendableMedia(store: MediaStore, workspaceId: string, id: string, kind: MediaKind): Promise<MediaItem> {
  const item = await mediaOf(store, workspaceId, id);
  if (item.size === null) return item;
  assertMediaSize(kind, item.size);
  if (kind === 'sticker' && item.size > MEDIA_LIMITS.sticker) {
    const bytes = await store.bytes(item.id);
    if (bytes) assertMediaFits('sticker', bytes);
  }
  return item;
}
