import { Elysia, t } from 'elysia';
import { chatHistory, getMessage, listChats } from '../../../core/messaging/history.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { poolMessagingStores } from '../../connections/stores.ts';
import { authentication } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { sendFromRequest } from '../../connections/send-request.ts';
import type { Actor } from '../../../core/identity/identity.ts';
import { authErrors, CodedError, iso, PageOf, PageQuery, presentPage, StandardError, Timestamp } from '../schemas.ts';
import { MessageView, presentMessage } from '../presenters/message.ts';
import { mediaSendLimitsText } from '../../../core/media/media-limits.ts';
import { SendBody } from '../send-body.ts';

const ChatView = t.Object({ remoteJid: t.String(), name: t.Nullable(t.String()), lastMessageAt: Timestamp, lastContactMessageAt: t.Nullable(Timestamp) });

const ConnectionParams = t.Object({ id: t.String() });
const NotFound = { 404: t.Union([CodedError, StandardError]) };

/** Sending (spec 4.3) and message history of a connection. */
export function messageRoutes(ctx: AppContext) {
  const send = (actor: Actor, connectionId: string, body: Record<string, unknown>, idempotencyKey: string | undefined) => sendFromRequest(ctx, actor, connectionId, body, idempotencyKey);

  return new Elysia({ name: 'routes.messages', prefix: '/v3/connections/:id/chats', detail: { tags: ['Messaging'] } })
    .use(authentication(ctx))
    .guard({ auth: true, params: ConnectionParams }, (app) =>
      app
        .post(
          '/messages',
          async ({ actor, params, body, headers, set }) => {
            const { message, created } = await send(actor, params.id, body, headers['idempotency-key']);
            // A retry with the same Idempotency-Key gets the first answer again (201), marked as a replay.
            set.status = 201;
            if (!created) set.headers['idempotent-replayed'] = 'true';
            return presentMessage(message);
          },
          {
            role: ['messages.send', 'write'],
            body: SendBody,
            response: { ...authErrors, ...NotFound, 201: MessageView, 413: StandardError, 422: StandardError },
            detail: {
              summary: 'Send a message; answers at once with status PENDING',
              description:
                'Exactly one content field: text, image, video, audio, document, sticker, location, contacts, list, buttons, reaction or template. ' +
                'An `Idempotency-Key` header makes a retried request answer the first message again (201, with the header `Idempotent-Replayed: true`) instead of sending again. ' +
                'Free text into a closed 24-hour window of an official connection is 422. ' +
                mediaSendLimitsText(),
            },
          },
        )
        .post(
          '/messages/send-template',
          async ({ actor, params, body, headers, set }) => {
            const { to, ...template } = body;
            const { message, created } = await send(actor, params.id, { to, template }, headers['idempotency-key']);
            // A retry with the same Idempotency-Key gets the first answer again (201), marked as a replay.
            set.status = 201;
            if (!created) set.headers['idempotent-replayed'] = 'true';
            return presentMessage(message);
          },
          {
            role: ['messages.send', 'write'],
            body: t.Object({ to: t.String(), name: t.String(), language: t.String(), components: t.Optional(t.Array(t.Any())) }),
            response: { ...authErrors, ...NotFound, 201: MessageView, 422: StandardError },
            detail: { summary: 'Send a pre-approved template; a template known here must be APPROVED (422) and its variables fit it (400, every problem at once) (201 means the platform accepted the call, not delivery)' },
          },
        )
        .get(
          '',
          async ({ actor, params, query }) => presentPage(await listChats(poolMessagingStores(ctx), actor, params.id, pageRequest(query)), presentChat),
          { query: PageQuery, response: { ...authErrors, ...NotFound, 200: PageOf(ChatView) }, detail: { summary: 'Chats of the connection, most recent first; `s` searches number and name' } },
        )
        .get(
          '/messages',
          async ({ actor, params, query }) => {
            const limit = query.limit === undefined ? undefined : Number(query.limit);
            const messages = await chatHistory(poolMessagingStores(ctx), actor, params.id, { chat: query.chat, limit, cursor: query.cursor });
            return messages.map(presentMessage);
          },
          {
            query: t.Object({
              chat: t.String({ description: 'The contact’s number or chat id' }),
              limit: t.Optional(t.String({ description: 'Integer 1 to 100, default 50' })),
              cursor: t.Optional(t.String({ description: 'Id of the oldest message already held' })),
            }),
            response: { ...authErrors, ...NotFound, 200: t.Array(MessageView) },
            detail: { summary: 'A chat’s messages, oldest first (bare array); fewer than `limit` means the beginning was reached' },
          },
        )
        .get(
          '/messages/:messageId',
          async ({ actor, params }) => presentMessage(await getMessage(poolMessagingStores(ctx), actor, params.id, params.messageId)),
          {
            params: t.Object({ id: t.String(), messageId: t.String() }),
            response: { ...authErrors, ...NotFound, 200: MessageView },
            detail: { summary: 'One message, with its delivery status' },
          },
        ),
    );
}

function presentChat(c: { remoteJid: string; name: string | null; lastMessageAt: Date; lastContactMessageAt: Date | null }) {
  return { remoteJid: c.remoteJid, name: c.name, lastMessageAt: iso(c.lastMessageAt), lastContactMessageAt: iso(c.lastContactMessageAt) };
}
