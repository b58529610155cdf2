import { t } from 'elysia';
import { authenticatedRoutes, presentPage } from '../kernel/http.ts';
import type { PluginContext } from '../kernel/context.ts';
import { authErrors, CodedError, PageOf, PageQuery, StandardError } from '../kernel/http.ts';
import { messagingDeps, messagingStores } from '../kernel/storage.ts';
import { mediaDownload } from '../kernel/jobs.ts';
import { sendFromRequest } from '../kernel/jobs.ts';
import { ButtonsContent, ListContent } from '../kernel/http.ts';
import { getConnection, listConnections } from '../../core/connections/connections.ts';
import { chatHistory, listChats } from '../../core/messaging/history.ts';
import { normalizeRecipient } from '../../core/messaging/outgoing.ts';
import { signalPresence, PRESENCES } from '../../core/messaging/presence.ts';
import { mediaOfChatMessage } from '../../core/media/message-media.ts';
import { badRequest } from '../../core/shared/errors.ts';
import { mediaSendLimitsText } from '../../core/media/media-limits.ts';
import { pageRequest } from '../../core/shared/pagination.ts';
import { presentChat, presentConnection, presentMessage, V2Chat, V2Connection, V2Message } from './views.ts';

const Media = t.Object(
  {
    url: t.Optional(t.String({ description: 'Public http(s) URL of the media' })),
    mediaId: t.Optional(t.String({ description: 'Id of media uploaded beforehand' })),
    mimetype: t.Optional(t.String()),
  },
  { additionalProperties: false },
);
const Captioned = t.Object({ url: t.Optional(t.String()), mediaId: t.Optional(t.String()), mimetype: t.Optional(t.String()), caption: t.Optional(t.String()) }, { additionalProperties: false });

/** The message kinds of v2 (spec 9), one field each. */
const V2_KINDS = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'list', 'buttons', 'template'] as const;

/** Fields of a v3 send that v2 never had. */
const V3_ONLY = ['to', 'replyTo', 'location', 'contacts', 'reaction'] as const;

/**
 * The v2 send: the recipient is in the path; exactly one content field. The message kinds of v2
 * only (spec 9: text, media, sticker, list, buttons, template): location, contact cards,
 * reactions and replies are v3's, and a field v2 does not know is refused.
 */
const V2SendBody = t.Object(
  {
    text: t.Optional(t.String({ description: 'Plain text, up to 4096 characters' })),
    image: t.Optional(Captioned),
    video: t.Optional(Captioned),
    audio: t.Optional(t.Object({ url: t.Optional(t.String()), mediaId: t.Optional(t.String()), mimetype: t.Optional(t.String()), voiceNote: t.Optional(t.Boolean()) }, { additionalProperties: false })),
    document: t.Optional(
      t.Object({ url: t.Optional(t.String()), mediaId: t.Optional(t.String()), mimetype: t.Optional(t.String()), fileName: t.Optional(t.String()), caption: t.Optional(t.String()) }, { additionalProperties: false }),
    ),
    sticker: t.Optional(Media),
    list: t.Optional(ListContent),
    buttons: t.Optional(ButtonsContent),
    template: t.Optional(t.Object({ name: t.String(), language: t.String(), components: t.Optional(t.Array(t.Any())) })),
    // Named so that a caller mixing the versions hears it (unknown fields are dropped, not refused).
    ...Object.fromEntries(
      V3_ONLY.map((field) => {
        const why = field === 'to' ? 'is not part of v2: the recipient is in the path' : 'is not part of v2 (a v3 field; send it through /v3)';
        return [field, t.Optional(t.Never({ description: why, error: why }))];
      }),
    ),
  },
  { additionalProperties: false },
);

const Id = t.Object({ id: t.String() });
const Chat = t.Object({ id: t.String(), remoteJid: t.String({ description: 'A phone number in international format or a chat id (…@s.whatsapp.net, …@g.us)' }) });
const NotFound = { 404: t.Union([CodedError, StandardError]) };

/**
 * v2 (spec 9, 4.7): connections, chats, messages with the recipient in the path, history and
 * media download. Every handler calls the use cases v3 calls; only the shapes differ.
 */
export function v2Routes(ctx: PluginContext) {
  return authenticatedRoutes(ctx, { name: 'plugins.v2', prefix: '/v2/connections', tags: ['v2'] })
    .get('', async ({ actor }) => (await listConnections(ctx.storage.read(messagingStores).connections, actor)).map(presentConnection), {
      response: { ...authErrors, 200: t.Array(V2Connection) },
      detail: { summary: 'v2: the connections of the workspace, with their status' },
    })
    .get('/:id', async ({ actor, params }) => presentConnection(await getConnection(ctx.storage.read(messagingStores).connections, actor, params.id)), {
      params: Id,
      response: { ...authErrors, ...NotFound, 200: V2Connection },
      detail: { summary: 'v2: one connection and its status' },
    })
    .get(
      '/:id/chats',
      async ({ actor, params, query }) => presentPage(await listChats(ctx.storage.read(messagingStores), actor, params.id, pageRequest(query)), presentChat),
      { params: Id, query: PageQuery, response: { ...authErrors, ...NotFound, 200: PageOf(V2Chat) }, detail: { summary: 'v2: chats of the connection, most recent first' } },
    )
    .post(
      '/:id/chats/:remoteJid/presence',
      async ({ actor, params, body, set }) => {
        const signal = await ctx.storage.transaction(messagingStores, (stores) => signalPresence(stores, messagingDeps(ctx), actor, params.id, jidOf(params.remoteJid), body.presence));
        set.status = 202;
        return { presence: signal.typing ? 'composing' : 'paused' };
      },
      {
        role: ['messages.send', 'write'],
        params: Chat,
        body: t.Object({ presence: t.String({ description: PRESENCES.join(' or ') }) }),
        response: { ...authErrors, ...NotFound, 202: t.Object({ presence: t.String() }), 422: StandardError },
        detail: { summary: 'v2: show (composing) or clear (paused) “typing…” in the chat; accepted at once, sent by the worker' },
      },
    )
    .post(
      '/:id/chats/:remoteJid/messages',
      async ({ actor, params, body, headers, set }) => {
        const kinds = V2_KINDS.filter((kind) => (body as Record<string, unknown>)[kind] !== undefined);
        if (kinds.length !== 1) throw badRequest([`body must contain exactly one message field: ${V2_KINDS.join(', ')}`]);
        const { message, created } = await sendFromRequest(ctx, actor, params.id, { ...body, to: jidOf(params.remoteJid) }, headers['idempotency-key']);
        set.status = created ? 201 : 200;
        return presentMessage(message);
      },
      {
        role: ['messages.send', 'write'],
        params: Chat,
        body: V2SendBody,
        response: { ...authErrors, ...NotFound, 200: V2Message, 201: V2Message, 413: StandardError, 422: StandardError },
        detail: {
          summary: 'v2: send a message to the chat in the path; answers at once with status PENDING',
          description: `Exactly one of text, image, video, audio, document, sticker, list, buttons or template. An \`Idempotency-Key\` header makes a retry answer the first message (200). ${mediaSendLimitsText()}`,
        },
      },
    )
    .get(
      '/:id/chats/:remoteJid/messages',
      async ({ actor, params, query }) => {
        const limit = query.limit === undefined ? undefined : Number(query.limit);
        return (await chatHistory(ctx.storage.read(messagingStores), actor, params.id, { chat: jidOf(params.remoteJid), limit, cursor: query.cursor })).map(presentMessage);
      },
      {
        params: Chat,
        query: t.Object({ limit: t.Optional(t.String({ description: '1 to 100; default 50' })), cursor: t.Optional(t.String({ description: 'The id of the oldest message already held' })) }),
        response: { ...authErrors, ...NotFound, 200: t.Array(V2Message) },
        detail: { summary: 'v2: the chat’s messages, oldest first, `limit` of them before `cursor`' },
      },
    )
    .get(
      '/:id/chats/:remoteJid/messages/:messageId/media',
      async ({ actor, params }) => mediaDownload(ctx, await mediaOfChatMessage(ctx.storage.read(messagingStores), actor, params.id, jidOf(params.remoteJid), params.messageId)),
      {
        params: t.Object({ id: t.String(), remoteJid: t.String(), messageId: t.String() }),
        response: { ...authErrors, ...NotFound, 200: t.Any({ description: 'The raw bytes, with their Content-Type' }), 502: StandardError },
        detail: {
          summary: 'v2: the media of a message, as bytes (with the API key)',
          description: '404 when the network no longer has the media, 502 when it failed to serve it.',
        },
      },
    );
}

/** The chat id a path's number or chat id stands for; a 400 naming the path when it is neither. */
function jidOf(chat: string): string {
  let recipient: string;
  try {
    recipient = normalizeRecipient(chat);
  } catch {
    throw badRequest(['params.remoteJid must be a phone number in international format (E.164) or a chat id (…@s.whatsapp.net, …@g.us)']);
  }
  return recipient.includes('@') ? recipient : `${recipient}@s.whatsapp.net`;
}
