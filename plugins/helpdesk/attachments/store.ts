import type { Kysely } from 'kysely';
import { camelCased, mediaStore, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import { attachmentDownloadLink, type Attachment, type AttachmentStore, type MessageAttachment } from '../../../core/helpdesk/conversations/message-attachments.ts';
import { helpdeskDb } from '../tables.ts';

const COLUMNS = ['id', 'workspace_id', 'conversation_id', 'message_id', 'media_id', 'file_name', 'mime_type', 'size', 'uploaded_by', 'created_at'] as const;

type Row = { id: string; workspace_id: string; conversation_id: string; message_id: string | null; media_id: string | null; file_name: string; mime_type: string; size: number | null; uploaded_by: string | null; created_at: Date };

function toAttachment(row: Row): Attachment {
  return camelCased(row);
}

/** The links' signer: the same key and public URL as connection media links. */
export function attachmentLinkDeps(ctx: Pick<PluginContext, 'clock' | 'keys' | 'config'>) {
  return {
    clock: ctx.clock,
    signingKey: ctx.keys.signing,
    // Read when used: the server learns its URL only once it has bound its port.
    get publicUrl() {
      return ctx.config.publicUrl;
    },
  };
}

export function attachmentStore(base: Kysely<Database>, ctx: Pick<PluginContext, 'clock' | 'keys' | 'config'>): AttachmentStore {
  const db = helpdeskDb(base);
  const links = attachmentLinkDeps(ctx);
  return {
    async insert(a, bytes) {
      await db
        .insertInto('helpdesk_attachments')
        .values({
          id: a.id,
          workspace_id: a.workspaceId,
          conversation_id: a.conversationId,
          message_id: a.messageId,
          media_id: a.mediaId,
          file_name: a.fileName,
          mime_type: a.mimeType,
          size: bytes ? bytes.length : a.size,
          bytes: bytes ?? null,
          uploaded_by: a.uploadedBy,
          created_at: a.createdAt,
        })
        .execute();
    },
    async get(workspaceId, id) {
      if (!isUuid(id)) return undefined;
      const row = await db.selectFrom('helpdesk_attachments').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return row && toAttachment(row);
    },
    async forMessages(messageIds) {
      const found = new Map<string, MessageAttachment[]>();
      if (messageIds.length === 0) return found;
      // The size of received media is known once its bytes are fetched: read it from the media item.
      const rows = await db
        .selectFrom('helpdesk_attachments as a')
        .leftJoin('media as m', 'm.id', 'a.media_id')
        .select(['a.id', 'a.message_id', 'a.file_name', 'a.mime_type', 'a.size', 'm.size as media_size'])
        .where('a.message_id', 'in', [...messageIds])
        .orderBy('a.created_at')
        .orderBy('a.id')
        .execute();
      for (const row of rows) {
        const list = found.get(row.message_id!) ?? [];
        list.push({
          id: row.id,
          fileName: row.file_name,
          mimeType: row.mime_type,
          size: row.size ?? row.media_size ?? null,
          downloadUrl: attachmentDownloadLink(links, row.id),
        });
        found.set(row.message_id!, list);
      }
      return found;
    },
    async bind(ids, messageId) {
      if (ids.length === 0) return 0;
      const result = await db.updateTable('helpdesk_attachments').set({ message_id: messageId }).where('id', 'in', [...ids]).where('message_id', 'is', null).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async moveToMedia(id, mediaId) {
      await db.updateTable('helpdesk_attachments').set({ media_id: mediaId, bytes: null }).where('id', '=', id).execute();
    },
    async heldBytes(id) {
      const row = await db.selectFrom('helpdesk_attachments').select('bytes').where('id', '=', id).executeTakeFirst();
      return row?.bytes ? new Uint8Array(row.bytes) : undefined;
    },
    async prunePending(before) {
      await db.deleteFrom('helpdesk_attachments').where('message_id', 'is', null).where('created_at', '<', before).execute();
    },
  };
}

/**
 * What the public download reads on the pool: an attachment found by id alone (the signed token
 * is the credential), and the bytes of connection media it points to.
 */
export function attachmentDownloads(base: Kysely<Database>) {
  return {
    async find(id: string) {
      if (!isUuid(id)) return undefined;
      return helpdeskDb(base)
        .selectFrom('helpdesk_attachments as a')
        .leftJoin('media as m', 'm.id', 'a.media_id')
        .select(['a.id', 'a.file_name', 'a.mime_type', 'a.media_id', 'a.bytes', 'm.mimetype as media_mimetype'])
        .where('a.id', '=', id)
        .executeTakeFirst();
    },
    mediaBytes: (mediaId: string) => mediaStore(base).bytes(mediaId),
  };
}
