import { z } from 'zod/v4';
import { acceptSend } from '../../../core/messaging/send.ts';
import { assertOutboundMedia, parseOutgoingContent } from '../../../core/messaging/outgoing.ts';
import { messagingDeps, messagingStores } from '../../connections/stores.ts';
import { defineTool } from '../tool.ts';
import { mediaSendLimitsText } from '../../../core/media/media-limits.ts';

/**
 * Sending a message: `messages:send`. The same use case as `POST /v3/connections/{id}/chats/messages`
 * (role check, send window, one credit reserved, queued for the driver), in one transaction.
 */

const media = {
  url: z.string().optional().describe('Public http(s) URL of the file'),
  mediaId: z.string().optional().describe('Id of media already uploaded (the `mediaId` answered by an upload from prepare_media_upload)'),
  mimetype: z.string().optional().describe('Media type such as image/jpeg (optional)'),
};
const mediaNote = 'Exactly one of url or mediaId.';

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
  input: {
    connectionId: z.string().min(1).describe('Id of the connection to send from (from list_connections); it must be CONNECTED'),
    to: z.string().min(1).describe('Recipient: a phone number in international format such as +5511999999999, or a chat id such as 1203630@g.us for a group'),
    text: z.string().optional().describe('Plain text, up to 4096 characters'),
    image: z.object({ ...media, caption: z.string().optional() }).optional().describe(`An image. ${mediaNote}`),
    video: z.object({ ...media, caption: z.string().optional() }).optional().describe(`A video. ${mediaNote}`),
    audio: z.object({ ...media, voiceNote: z.boolean().optional().describe('Send as a voice note') }).optional().describe(`An audio file. ${mediaNote}`),
    document: z.object({ ...media, fileName: z.string().optional(), caption: z.string().optional() }).optional().describe(`A document. ${mediaNote}`),
    sticker: z.object(media).optional().describe(`A sticker (image/webp). ${mediaNote}`),
    location: z
      .object({ latitude: z.number(), longitude: z.number(), name: z.string().optional(), address: z.string().optional() })
      .optional()
      .describe('A map location'),
    contacts: z
      .array(z.object({ name: z.string(), phones: z.array(z.string()), emails: z.array(z.string()).optional(), organization: z.string().optional() }))
      .optional()
      .describe('Contact cards'),
    list: z
      .object({
        body: z.string(),
        buttonText: z.string().describe('Label of the button that opens the list'),
        header: z.string().optional(),
        footer: z.string().optional(),
        sections: z.array(z.object({ title: z.string(), rows: z.array(z.object({ id: z.string(), title: z.string(), description: z.string().optional() })) })),
      })
      .optional()
      .describe('A list of choices (1 to 10 rows in all); sent as numbered text where the network has no lists'),
    buttons: z
      .object({
        body: z.string(),
        header: z.string().optional(),
        footer: z.string().optional(),
        buttons: z.array(z.object({ id: z.string(), title: z.string().describe('Up to 20 characters') })).describe('1 to 3 buttons'),
      })
      .optional()
      .describe('Reply buttons; sent as numbered text where the network has no buttons'),
    reaction: z
      .object({ messageId: z.string().describe('Id of the message to react to'), emoji: z.string().describe('An emoji; empty removes the reaction') })
      .optional()
      .describe('A reaction to a message of this chat'),
    template: z
      .object({ name: z.string(), language: z.string().describe('Such as en_US'), components: z.array(z.any()).optional() })
      .optional()
      .describe('A pre-approved template (official connections only): a template known on the connection must be APPROVED, and its variables must fit it'),
    replyTo: z.string().optional().describe('Id of a message of this chat to quote'),
    idempotencyKey: z.string().optional().describe('Retrying with the same key answers the first message instead of sending again'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(input, { actor, ctx }) {
    const { connectionId, to, replyTo, idempotencyKey, ...fields } = input;
    const content = parseOutgoingContent(fields);
    await assertOutboundMedia(ctx.outbound, 'body', content);
    const { message, created } = await ctx.db
      .transaction()
      .execute((trx) => acceptSend(messagingStores(trx, ctx), messagingDeps(ctx), actor, connectionId, { to, content, replyTo, idempotencyKey }));
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
