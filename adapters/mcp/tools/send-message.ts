import { t } from 'elysia';
import { acceptSend } from '../../../core/messaging/send.ts';
import { assertOutboundMedia, parseOutgoingContent } from '../../../core/messaging/outgoing.ts';
import { messagingDeps, messagingStores } from '../../connections/stores.ts';
import { SendBody } from '../../http/send-body.ts';
import { defineTool } from '../tool.ts';
import { countAcceptedSend } from '../../metrics/accepted-sends.ts';
import { mediaSendLimitsText } from '../../../core/media/media-limits.ts';

/**
 * Sending a message: `messages:send`. The same use case as `POST /v3/connections/{id}/chats/messages`
 * (role check, send window, one credit reserved, queued for the driver), in one transaction.
 */

export const sendMessageTool = defineTool({
  name: 'send_message',
  title: 'Send a message',
  description:
    'Sends a message from a connection to a contact or group. Give `to` and exactly one content field: ' +
    'text, image, video, audio, document, sticker (media by public `url` or by `mediaId`), location, contacts, list, buttons, reaction or template. ' +
    'The message is accepted at once with status PENDING and delivered in the background (then SENT, DELIVERED, READ or FAILED: check with list_messages). ' +
    'Each message uses one plan credit. On official connections free text to a contact who has not written in 24 hours is refused; templates pass. ' +
    'To send a local file, use prepare_media_upload instead. ' +
    mediaSendLimitsText(),
  scopes: ['messages:send'],
  // The REST route's body, with what REST carries in the path (the connection) and a header (the key).
  input: t.Composite([
    t.Object({ connectionId: t.String({ minLength: 1, description: 'Id of the connection to send from (from list_connections); it must be CONNECTED' }) }),
    SendBody,
    t.Object({ idempotencyKey: t.Optional(t.String({ description: 'Retrying with the same key answers the first message instead of sending again' })) }),
  ]),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(input, { actor, ctx }) {
    const { connectionId, to, replyTo, idempotencyKey, ...fields } = input;
    const content = parseOutgoingContent(fields);
    await assertOutboundMedia(ctx.outbound, 'body', content);
    const { message, created } = await ctx.db
      .transaction()
      .execute((trx) => acceptSend(messagingStores(trx, ctx), messagingDeps(ctx), actor, connectionId, { to, content, replyTo, idempotencyKey }));
    await countAcceptedSend(ctx)(message, created);
    return {
      structured: {
        messageId: message.id,
        status: message.status,
        connectionId: message.connectionId,
        remoteJid: message.remoteJid,
        kind: message.kind,
        created,
        createdAt: message.createdAt.toISOString(),
      },
      summary: created
        ? `Message ${message.id} (${message.kind}) to ${message.remoteJid} accepted: ${message.status}`
        : `Message ${message.id} was already accepted with this idempotency key: ${message.status}`,
    };
  },
});
