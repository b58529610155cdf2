import { t } from 'elysia';
import { UPLOAD_TICKET_MINUTES } from '../../../core/media/media.ts';
import { mediaLimitsText } from '../../../core/media/media-limits.ts';
import { prepareMediaUpload } from '../../../core/media/uploads.ts';
import { MEDIA_KINDS } from '../../../core/messaging/outgoing.ts';
import { messagingDeps, poolMessagingStores } from '../../connections/stores.ts';
import { OneOf } from '../../http/schemas.ts';
import { defineTool } from '../tool.ts';

/**
 * A signed, single-use upload URL (spec 5.6): `messages:send`. An assistant that holds a file
 * (in its sandbox, say) but no API key uploads the bytes with a plain POST; the upload sends them.
 */
export const prepareMediaUploadTool = defineTool({
  name: 'prepare_media_upload',
  title: 'Prepare a media upload',
  description:
    `Returns a signed upload URL, valid ${UPLOAD_TICKET_MINUTES} minutes and usable once, for sending a file to \`to\`. ` +
    'POST the raw bytes of the file to uploadUrl with their Content-Type header (for example image/png; an optional X-File-Name header names a document); no API key or token is needed. ' +
    'The upload sends the media to `to` at once as `kind` (with the caption) and answers JSON with `mediaId` and the `message` (id and status). ' +
    'The mediaId can then be reused with send_message (for example image: { mediaId }) to send the same file again. ' +
    'Example: curl -X POST -H "Content-Type: image/png" --data-binary @photo.png "<uploadUrl>". Uses one plan credit. ' +
    mediaLimitsText(),
  scopes: ['messages:send'],
  input: t.Object({
    connectionId: t.String({ minLength: 1, description: 'Id of the connection to send from (from list_connections)' }),
    to: t.String({ minLength: 1, description: 'Recipient: a phone number in international format such as +5511999999999, or a group chat id' }),
    kind: OneOf(MEDIA_KINDS, { description: 'How the file is sent: image, video, audio, document or sticker (image/webp)' }),
    caption: t.Optional(t.String({ description: 'Caption shown with an image, video or document' })),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(input, { actor, ctx }) {
    const ticket = await prepareMediaUpload(poolMessagingStores(ctx), messagingDeps(ctx), actor, input.connectionId, input);
    return {
      structured: {
        uploadUrl: ticket.uploadUrl,
        method: 'POST',
        expiresAt: ticket.expiresAt.toISOString(),
        kind: input.kind,
        instructions: 'POST the raw file bytes to uploadUrl with the file’s Content-Type header; the upload sends the media and answers { mediaId, message }.',
      },
      summary: `Upload URL ready (POST the raw bytes with their Content-Type; valid until ${ticket.expiresAt.toISOString()}, single use).`,
    };
  },
});
