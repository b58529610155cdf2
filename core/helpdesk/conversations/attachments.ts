import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { assertUploadable, mediaOf, type MediaStore } from '../../media/media.ts';
import { assertMediaFits } from '../../media/media-limits.ts';
import type { OutgoingContent } from '../../messaging/outgoing.ts';
import { badRequest, conflict, DomainError } from '../../shared/errors.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import { getConversation, type Conversation, type ConversationStores } from './conversations.ts';
import { cleanFileName, defaultFileName, mediaKindOf, PENDING_UPLOAD_HOURS, type Attachment, type AttachmentStore } from './message-attachments.ts';
import { assertHelpdeskWritable } from '../plan-gate.ts';

/*
 * Attaching files to new messages: uploads, references to connection media, and replies sent
 * as media messages. Showing files on messages (types, links) lives in message-attachments.ts,
 * which conversations.ts uses too.
 */
export { withAttachments } from './message-attachments.ts';

/** Files on one message (a note; a reply on a connection takes one). */
export const MAX_ATTACHMENTS = 10;

export interface AttachmentDeps {
  clock: Clock;
  ids: IdGen;
}

/**
 * `POST …/conversations/{id}/attachments`: keeps a file for a message to come (a reply or a
 * note), by whoever may write in the conversation. Uploads not used within a day are forgotten.
 */
export async function uploadAttachment(
  stores: ConversationStores,
  deps: AttachmentDeps,
  actor: Actor,
  conversationId: string,
  file: { bytes: Uint8Array; mimetype: string; fileName?: string },
): Promise<Attachment> {
  const conversation = await getConversation(stores, actor, conversationId);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(file.mimetype)) throw badRequest('Content-Type must be a media type such as image/png');
  assertUploadable(file.bytes, file.mimetype, 'document');
  const now = deps.clock.now();
  await stores.attachments.prunePending(new Date(now.getTime() - PENDING_UPLOAD_HOURS * 3_600_000));
  const attachment: Attachment = {
    id: deps.ids.next(),
    workspaceId: conversation.workspaceId,
    conversationId: conversation.id,
    messageId: null,
    mediaId: null,
    fileName: cleanFileName(file.fileName, defaultFileName(mediaKindOf(file.mimetype), file.mimetype)),
    mimeType: file.mimetype.toLowerCase(),
    size: file.bytes.length,
    uploadedBy: actor.userId,
    createdAt: now,
  };
  await stores.attachments.insert(attachment, file.bytes);
  return attachment;
}

/** What a new message names as its attachments: an upload of this conversation, or a connection media item. */
export interface AttachmentRef {
  id?: string;
  mediaId?: string;
  fileName?: string;
}

/**
 * The attachments a new message will carry, checked: an upload (`id`) must be of this
 * conversation and on no message yet; a media item (`mediaId`) must be of the workspace. Every
 * problem is reported at once. Nothing is written.
 */
export async function prepareAttachments(
  stores: { attachments: AttachmentStore; media: MediaStore },
  deps: AttachmentDeps,
  actor: Actor,
  conversation: Conversation,
  refs: readonly AttachmentRef[] | undefined,
): Promise<Array<{ attachment: Attachment; isNew: boolean }>> {
  if (!refs || refs.length === 0) return [];
  if (refs.length > MAX_ATTACHMENTS) throw badRequest(`body.attachments holds at most ${MAX_ATTACHMENTS} files`);
  const problems: string[] = [];
  const out: Array<{ attachment: Attachment; isNew: boolean }> = [];
  const seen = new Set<string>();
  for (const [i, ref] of refs.entries()) {
    const where = `body.attachments.${i}`;
    if ((ref.id === undefined) === (ref.mediaId === undefined)) {
      problems.push(`${where} must have exactly one of id (an upload to this conversation) or mediaId`);
      continue;
    }
    const key = ref.id ?? `media:${ref.mediaId}`;
    if (seen.has(key)) {
      problems.push(`${where} names a file already attached`);
      continue;
    }
    seen.add(key);
    if (ref.id !== undefined) {
      const found = await stores.attachments.get(actor.workspaceId, ref.id);
      if (!found || found.conversationId !== conversation.id) problems.push(`${where}.id is not an upload to this conversation`);
      else if (found.messageId !== null) problems.push(`${where}.id is already on a message`);
      else out.push({ attachment: { ...found, fileName: ref.fileName === undefined ? found.fileName : cleanFileName(ref.fileName, found.fileName) }, isNew: false });
      continue;
    }
    try {
      const item = await mediaOf(stores.media, actor.workspaceId, ref.mediaId!);
      const kind = mediaKindOf(item.mimetype);
      out.push({
        attachment: {
          id: deps.ids.next(),
          workspaceId: actor.workspaceId,
          conversationId: conversation.id,
          messageId: null,
          mediaId: item.id,
          fileName: cleanFileName(ref.fileName ?? item.fileName, defaultFileName(kind, item.mimetype)),
          mimeType: item.mimetype,
          size: item.size,
          uploadedBy: actor.userId,
          createdAt: deps.clock.now(),
        },
        isNew: true,
      });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      problems.push(`${where}.mediaId is not a media item of this workspace`);
    }
  }
  if (problems.length > 0) throw badRequest(problems);
  return out;
}

/** Puts the prepared attachments on the (already stored) message. */
export async function attachToMessage(stores: { attachments: AttachmentStore }, prepared: ReadonlyArray<{ attachment: Attachment; isNew: boolean }>, messageId: string): Promise<void> {
  for (const { attachment, isNew } of prepared) {
    if (isNew) await stores.attachments.insert({ ...attachment, messageId });
  }
  const existing = prepared.filter((p) => !p.isNew).map((p) => p.attachment);
  // Two messages claiming one upload at once: the second finds it taken.
  if (existing.length > 0 && (await stores.attachments.bind(existing.map((a) => a.id), messageId)) !== existing.length) {
    throw conflict('An attachment was put on another message at the same time');
  }
}

/**
 * The content of a reply carrying one file, sent as a media message on the connection (a
 * network message holds one media item). An upload's bytes move into a media item of the
 * connection so the driver sends them like any upload; the text goes as the caption.
 */
export async function replyMediaContent(
  stores: { attachments: AttachmentStore; media: MediaStore },
  deps: AttachmentDeps,
  connectionId: string,
  prepared: { attachment: Attachment; isNew: boolean },
  caption: string,
): Promise<OutgoingContent> {
  const { attachment } = prepared;
  const kind = mediaKindOf(attachment.mimeType);
  if (kind === 'audio' && caption.length > 0) throw badRequest('An audio reply carries no text: send the text as its own reply');
  if (attachment.mediaId === null) {
    const bytes = await stores.attachments.heldBytes(attachment.id);
    if (!bytes) throw badRequest('The uploaded file is no longer available: upload it again');
    // Sent to the network: held to its limit for the kind (413), checked before anything moves.
    assertMediaFits(kind, bytes);
    const mediaId = deps.ids.next();
    await stores.media.insert(
      { id: mediaId, workspaceId: attachment.workspaceId, connectionId, origin: 'upload', driverRef: null, mimetype: attachment.mimeType, fileName: attachment.fileName, size: bytes.length, createdAt: deps.clock.now() },
      bytes,
    );
    await stores.attachments.moveToMedia(attachment.id, mediaId);
    attachment.mediaId = mediaId;
  }
  const source: Record<string, unknown> = { mediaId: attachment.mediaId, mimetype: attachment.mimeType };
  if (caption.length > 0) source.caption = caption;
  if (kind === 'document') source.fileName = attachment.fileName;
  return { kind, [kind]: source } as unknown as OutgoingContent;
}
