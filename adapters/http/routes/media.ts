import { Elysia, t } from 'elysia';
import { assertDownloadToken, peekUploadTicket } from '../../../core/media/media.ts';
import { mediaKindOfType, mediaLimitFor, mediaLimitsText, MediaTooLarge } from '../../../core/media/media-limits.ts';
import type { MediaKind } from '../../../core/messaging/outgoing.ts';
import { prepareMediaUpload, uploadByTicket, uploadMedia } from '../../../core/media/uploads.ts';
import { badRequest } from '../../../core/shared/errors.ts';
import { mediaDownload } from '../../connections/jobs.ts';
import { messagingDeps, messagingStores, poolMessagingStores } from '../../connections/stores.ts';
import { authentication } from '../auth.ts';
import { bodyLimits, PayloadTooLarge, readBytes } from '../body.ts';
import type { AppContext } from '../context.ts';
import { authErrors, CodedError, iso, StandardError, Timestamp, Uuid } from '../schemas.ts';
import { presentMessage } from '../presenters/message.ts';
import { checkSignedLink } from '../auth-failures.ts';

/** Raw uploads are read by the handler (no JSON parsing); this documents them. */
const RAW_BYTES = {
  required: true,
  content: { '*/*': { schema: { type: 'string', format: 'binary', description: 'The media bytes; Content-Type is the media type' } } },
} as const;

const MediaView = t.Object({ mediaId: Uuid, mimetype: t.String(), size: t.Integer(), fileName: t.Nullable(t.String()) });

/**
 * Media: uploads for sending (with the API key, or with a signed single-use ticket valid 10
 * minutes) and signed download links valid 7 days (spec 2.13, 4.3, 5.6, 8).
 */
export function mediaRoutes(ctx: AppContext) {
  const deps = messagingDeps(ctx);
  const limits = bodyLimits(ctx.config);
  const inTransaction = <T>(work: (stores: ReturnType<typeof messagingStores>) => Promise<T>) =>
    ctx.db.transaction().execute((trx) => work(messagingStores(trx, ctx)));

  const withKey = new Elysia({ name: 'routes.media.apikey', prefix: '/v3/connections/:id/media', detail: { tags: ['Media'] } })
    .use(authentication(ctx))
    .guard({ auth: true, role: ['messages.send', 'write'], params: t.Object({ id: t.String() }) }, (app) =>
      app
        .post(
          '',
          async ({ actor, params, request, set }) => {
            const file = await readUpload(request, limits.media, mediaKindOfType);
            const item = await inTransaction((stores) => uploadMedia(stores, deps, actor, params.id, file));
            set.status = 201;
            return { mediaId: item.id, mimetype: item.mimetype, size: item.size ?? file.bytes.length, fileName: item.fileName };
          },
          {
            parse: 'none',
            response: { ...authErrors, 404: t.Union([CodedError, StandardError]), 201: MediaView, 413: StandardError },
            detail: {
              summary: 'Upload media to send later by `mediaId`: the raw bytes with their Content-Type (and optional X-File-Name)',
              description:
                `${mediaLimitsText()} The kind is not known at upload, so the Content-Type decides the limit here (image/* as an image, video/*, audio/*, anything else as a document); ` +
                'sending the `mediaId` checks again against the kind it is sent as (a sticker over 100 KB must be an animated WebP).',
              requestBody: RAW_BYTES,
            },
          },
        )
        .post(
          '/tickets',
          async ({ actor, params, body, set }) => {
            const ticket = await prepareMediaUpload(poolMessagingStores(ctx), deps, actor, params.id, body);
            set.status = 201;
            return { ticketId: ticket.ticketId, uploadUrl: ticket.uploadUrl, expiresAt: iso(ticket.expiresAt) };
          },
          {
            body: t.Object({
              to: t.String(),
              kind: t.String({ description: 'image, video, audio, document or sticker' }),
              caption: t.Optional(t.String()),
            }),
            response: { ...authErrors, 404: t.Union([CodedError, StandardError]), 201: t.Object({ ticketId: t.String(), uploadUrl: t.String(), expiresAt: Timestamp }) },
            detail: { summary: 'A signed, single-use upload ticket (10 minutes): uploading to it sends the media to `to`', description: `The upload is held to the limit of \`kind\`. ${mediaLimitsText()}` },
          },
        ),
    );

  return new Elysia({ name: 'routes.media', detail: { tags: ['Media'] } })
    .use(withKey)
    .post(
      '/v3/connections/media/uploads/:ticketId',
      async ({ params, request, set }) => {
        // The ticket's kind bounds the read; a ticket that does not verify is refused by the use case.
        const kind = peekUploadTicket(deps, params.ticketId)?.kind;
        const file = await readUpload(request, limits.media, () => kind);
        const { media, message } = await inTransaction((stores) => uploadByTicket(stores, deps, params.ticketId, file));
        set.status = 201;
        return { mediaId: media.id, message: presentMessage(message) };
      },
      {
        parse: 'none',
        params: t.Object({ ticketId: t.String() }),
        response: { 201: t.Object({ mediaId: Uuid, message: t.Any() }), 400: StandardError, 401: StandardError, 409: StandardError, 413: StandardError },
        detail: {
          summary: 'Upload by ticket (no API key): the raw bytes with their Content-Type; the media is sent at once',
          description: `The upload is held to the limit of the ticket's kind. ${mediaLimitsText()}`,
          requestBody: RAW_BYTES,
        },
      },
    )
    .get(
      '/v3/connections/media/:mediaId/download',
      async ({ params, query, request, server }) => {
        await checkSignedLink(ctx, request, server?.requestIP(request)?.address, () => assertDownloadToken(deps, params.mediaId, query.token));
        return mediaDownload(ctx, params.mediaId);
      },
      {
        params: t.Object({ mediaId: t.String() }),
        query: t.Object({ token: t.Optional(t.String()) }),
        response: { 200: t.Any({ description: 'The raw bytes' }), 401: StandardError, 404: StandardError, 429: StandardError, 502: StandardError },
        detail: {
          summary: 'Signed media download (7 days): streams the bytes, no API key',
          description: 'Received media not kept yet is fetched from the network: 404 when the network no longer has it (expired or deleted), 502 when the network failed to serve it (try again later).',
        },
      },
    );
}

/**
 * The raw bytes, counted while they arrive and refused (413) past the kind's limit, lowered by
 * MAX_MEDIA_BYTES, without holding more; the use case checks the bytes against the kind again
 * (a sticker's limit depends on whether it is animated).
 */
async function readUpload(request: Request, cap: number, kindOf: (mimetype: string) => MediaKind | undefined): Promise<{ bytes: Uint8Array; mimetype: string; fileName?: string }> {
  const mimetype = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (!mimetype || mimetype === 'application/json' || mimetype.startsWith('multipart/')) {
    throw badRequest('Send the raw bytes with the media Content-Type (for example image/jpeg)');
  }
  const kind = kindOf(mimetype);
  const limit = kind ? mediaLimitFor(kind, { cap }) : cap;
  let bytes: Uint8Array;
  try {
    bytes = await readBytes(request, limit);
  } catch (error) {
    if (kind && error instanceof PayloadTooLarge) throw new MediaTooLarge(kind, limit);
    throw error;
  }
  const fileName = request.headers.get('x-file-name') ?? undefined;
  return { bytes, mimetype, fileName };
}
