import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { DomainError } from '../shared/errors.ts';
import { connectionNotFound } from '../connections/connections.ts';
import { acceptSend, type SendDeps, type SendStores } from '../messaging/send.ts';
import type { ChatMessage } from '../messaging/message.ts';
import { MEDIA_KINDS, normalizeRecipient, type MediaKind, type OutgoingContent } from '../messaging/outgoing.ts';
import { mediaKindOfType } from './media-limits.ts';
import { assertUploadable, issueUploadTicket, redeemUploadTicket, type MediaItem, type MediaLinkDeps } from './media.ts';

type UploadDeps = SendDeps & MediaLinkDeps;

/** Stores media for later sends by `mediaId` (API key upload). */
export async function uploadMedia(
  stores: SendStores,
  deps: UploadDeps,
  actor: Actor,
  connectionId: string,
  file: { bytes: Uint8Array; mimetype: string; fileName?: string },
): Promise<MediaItem> {
  authorize(actor.roles, 'messages.send', 'write');
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  // The kind it will be sent as is not known yet: its type's (a send by mediaId checks again).
  assertUploadable(file.bytes, file.mimetype, mediaKindOfType(file.mimetype));
  return keepUpload(stores, deps, { workspaceId: actor.workspaceId, connectionId }, file);
}

/**
 * A signed, single-use ticket valid 10 minutes that lets software without the API key (an AI
 * assistant's sandbox, a browser) upload one media item, which then goes to `to` as `kind`.
 */
export async function prepareMediaUpload(
  stores: SendStores,
  deps: UploadDeps,
  actor: Actor,
  connectionId: string,
  input: { to: string; kind: string; caption?: string },
) {
  authorize(actor.roles, 'messages.send', 'write');
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  if (!(MEDIA_KINDS as readonly string[]).includes(input.kind)) throw new DomainError('invalid_input', [`body.kind must be one of ${MEDIA_KINDS.join(', ')}`]);
  return issueUploadTicket(deps, {
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    connectionId,
    to: normalizeRecipient(input.to),
    kind: input.kind as MediaKind,
    caption: input.caption,
  });
}

/** Redeems a ticket: keeps the bytes and sends them, as the member who asked for the ticket. */
export async function uploadByTicket(
  stores: SendStores,
  deps: UploadDeps,
  ticketId: string,
  file: { bytes: Uint8Array; mimetype: string; fileName?: string },
): Promise<{ media: MediaItem; message: ChatMessage }> {
  const ticket = await redeemUploadTicket(deps, stores.media, ticketId);
  const membership = await stores.identity.getMembership(ticket.workspaceId, ticket.userId);
  if (!membership) throw new DomainError('unauthenticated', 'The member who asked for this ticket no longer belongs to the workspace');
  const actor: Actor = { userId: ticket.userId, workspaceId: ticket.workspaceId, roles: membership.roles };
  assertUploadable(file.bytes, file.mimetype, ticket.kind);
  const media = await keepUpload(stores, deps, ticket, file);
  const source: Record<string, unknown> = { mediaId: media.id, mimetype: file.mimetype };
  if (ticket.caption && ticket.kind !== 'audio' && ticket.kind !== 'sticker') source.caption = ticket.caption;
  if (ticket.kind === 'document' && file.fileName) source.fileName = file.fileName;
  const content = { kind: ticket.kind, [ticket.kind]: source } as unknown as OutgoingContent;
  const { message } = await acceptSend(stores, deps, actor, ticket.connectionId, { to: ticket.to, content, idempotencyKey: `ticket:${ticket.nonce}` });
  return { media, message };
}

type UploadedFile = { bytes: Uint8Array; mimetype: string; fileName?: string };

/** Keeps an uploaded file's bytes as media of a workspace's connection. */
async function keepUpload(stores: SendStores, deps: UploadDeps, owner: { workspaceId: string; connectionId: string }, file: UploadedFile): Promise<MediaItem> {
  const media: MediaItem = {
    id: deps.ids.next(),
    workspaceId: owner.workspaceId,
    connectionId: owner.connectionId,
    origin: 'upload',
    driverRef: null,
    mimetype: file.mimetype,
    fileName: file.fileName ?? null,
    size: file.bytes.length,
    createdAt: deps.clock.now(),
  };
  await stores.media.insert(media, file.bytes);
  return media;
}
