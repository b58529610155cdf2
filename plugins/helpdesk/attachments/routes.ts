import { Elysia, t } from 'elysia';
import { uploadAttachment } from '../../../core/helpdesk/conversations/attachments.ts';
import { assertAttachmentToken, attachmentDownloadLink } from '../../../core/helpdesk/conversations/message-attachments.ts';
import { badRequest, notFound } from '../../../core/shared/errors.ts';
import { mediaLimitsText } from '../../../core/media/media-limits.ts';
import { DriverError } from '../../../core/connections/driver.ts';
import { authenticatedRoutes } from '../../kernel/http.ts';
import { bodyLimits, readBytes, readMultipart } from '../../kernel/http.ts';
import { checkSignedLink } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, StandardError } from '../../kernel/http.ts';
import { fetchReceivedMedia } from '../../kernel/jobs.ts';
import { attachmentDownloads, attachmentLinkDeps } from './store.ts';
import { conversationStores } from '../conversations/store.ts';
import { AttachmentView } from '../conversations/views.ts';

const UPLOAD_BODY = {
  required: true,
  content: {
    '*/*': { schema: { type: 'string' as const, format: 'binary', description: 'The raw bytes; Content-Type is the file\'s media type, X-File-Name its name' } },
    'multipart/form-data': { schema: { type: 'object' as const, required: ['file'] as string[], properties: { file: { type: 'string' as const, format: 'binary', description: 'One file (its part\'s name and type are kept)' } } } },
  },
};

/**
 * Files for helpdesk messages (spec 2.12, 4.5, 5.6). Uploading keeps a file for a message to
 * come: `POST …/messages` then names it in `attachments: [{ id }]` (media already uploaded
 * through the connection media API can be named by `mediaId` instead). Every attachment a
 * message shows has a signed `downloadUrl`, valid 7 days, that streams the bytes with no API key.
 */
export function attachmentRoutes(ctx: PluginContext) {
  const links = attachmentLinkDeps(ctx);

  const upload = authenticatedRoutes(ctx, { name: 'plugins.helpdesk.attachments.upload', prefix: '/v3/helpdesk/conversations', tags: ['Helpdesk'] })
    .post(
      '/:id/attachments',
      async ({ actor, params, request, set }) => {
        const file = await readFile(request, bodyLimits(ctx.config).media);
        const attachment = await ctx.storage.transaction(conversationStores, (stores) => uploadAttachment(stores, ctx, actor, params.id, file));
        set.status = 201;
        return {
          id: attachment.id,
          fileName: attachment.fileName,
          mimeType: attachment.mimeType,
          size: attachment.size,
          downloadUrl: attachmentDownloadLink(links, attachment.id),
        };
      },
      {
        parse: 'none',
        params: t.Object({ id: t.String() }),
        response: { ...authErrors, 404: StandardError, 201: AttachmentView, 413: StandardError },
        detail: {
          summary: 'Upload a file for a reply or a note to come (PRO plan; at most MAX_MEDIA_BYTES): raw bytes with their Content-Type and X-File-Name, or multipart with one `file`; name it in POST …/messages `attachments: [{ id }]` within a day',
          description: `A file sent in a reply on a connection goes out as an image, video or audio by its Content-Type (otherwise a document) and is held to that kind's limit when the reply is posted (413). ${mediaLimitsText()}`,
          requestBody: UPLOAD_BODY,
        },
      },
    );

  return new Elysia({ name: 'plugins.helpdesk.attachments', detail: { tags: ['Helpdesk'] } })
    .use(upload)
    .get(
      '/v3/helpdesk/messages/attachments/:id/public/download',
      async ({ params, query, request, server }) => {
        await checkSignedLink(ctx, request, server?.requestIP(request)?.address, () => assertAttachmentToken(links, params.id, query.token));
        const downloads = ctx.storage.read(attachmentDownloads);
        const found = await downloads.find(params.id);
        if (!found) throw notFound('Attachment not found');
        let bytes: Uint8Array | undefined = found.bytes ? new Uint8Array(found.bytes) : undefined;
        if (!bytes && found.media_id) bytes = (await downloads.mediaBytes(found.media_id)) ?? (await fromNetwork(ctx, found.media_id));
        if (!bytes) throw notFound('The file is no longer available');
        const ascii = found.file_name.replace(/[^\x20-\x7e]|["\\]/g, '_');
        return new Response(bytes as Uint8Array<ArrayBuffer>, {
          headers: {
            'content-type': found.mime_type,
            'content-length': String(bytes.length),
            // Always a download, never rendered by the browser on our origin.
            'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(found.file_name)}`,
            'x-content-type-options': 'nosniff',
            'cache-control': 'private, max-age=3600',
          },
        });
      },
      {
        params: t.Object({ id: t.String() }),
        query: t.Object({ token: t.Optional(t.String()) }),
        response: { 200: t.Any({ description: 'The raw bytes, with the file\'s Content-Type and Content-Disposition' }), 401: StandardError, 404: StandardError, 429: StandardError },
        detail: { summary: 'Signed attachment download (no API key; the link in a message\'s attachments, valid 7 days): streams the bytes' },
      },
    );
}

/** Received media not kept yet, fetched now; a network that no longer has it means the file is gone. */
async function fromNetwork(ctx: PluginContext, mediaId: string): Promise<Uint8Array | undefined> {
  try {
    return await fetchReceivedMedia(ctx, mediaId);
  } catch (error) {
    if (error instanceof DriverError) return undefined;
    throw error;
  }
}

/** The raw bytes with their Content-Type (and X-File-Name), or a multipart form with one `file`. */
async function readFile(request: Request, limit: number): Promise<{ bytes: Uint8Array; mimetype: string; fileName?: string }> {
  const contentType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType === 'multipart/form-data') {
    const form = await readMultipart(request, limit);
    if (!form) throw badRequest('The multipart body could not be read');
    const file = form.get('file');
    if (!(file instanceof File)) throw badRequest('The multipart body needs one file part named file');
    const mimetype = (file.type || 'application/octet-stream').split(';')[0]!.trim().toLowerCase();
    return { bytes: new Uint8Array(await file.arrayBuffer()), mimetype, fileName: file.name || undefined };
  }
  if (!contentType || contentType === 'application/json') throw badRequest('Send the raw bytes with the file\'s Content-Type (for example application/pdf), or a multipart form with a file');
  const name = request.headers.get('x-file-name');
  return { bytes: await readBytes(request, limit), mimetype: contentType, fileName: name ? safeDecode(name) : undefined };
}

/** X-File-Name may be percent-encoded (headers are ASCII); a name that is not stays as sent. */
function safeDecode(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}
