import { Elysia, t } from 'elysia';
import { authorize } from '../../../core/identity/roles.ts';
import { connectionNotFound } from '../../../core/connections/connections.ts';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../core/messaging/delivery-status.ts';
import { normalizeRecipient } from '../../../core/messaging/outgoing.ts';
import { DomainError, notFound } from '../../../core/shared/errors.ts';
import type { Actor } from '../../../core/identity/identity.ts';
import type { Connection } from '../../../core/connections/connection.ts';
import { driverEventsFor } from '../../connections/driver-events.ts';
import { poolMessagingStores } from '../../connections/stores.ts';
import { receiveBatcher } from '../../connections/receive-batcher.ts';
import { simulatedMessage } from '../../drivers/sandbox/simulator.ts';
import { authentication } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { authErrors, CodedError, OneOf, StandardError } from '../schemas.ts';
import { MessageView, presentMessage } from '../presenters/message.ts';

const Ok = t.Object({ ok: t.Literal(true) });

/**
 * The sandbox network's controls: act as a contact (messages of any 2.13 type, receipts,
 * presence, edits, deletions). They exist only on sandbox connections.
 */
export function sandboxRoutes(ctx: AppContext) {
  const sandboxConnection = async (actor: Actor, id: string) => {
    authorize(actor.roles, 'connections', 'write');
    const connection = await poolMessagingStores(ctx).connections.get(actor.workspaceId, id);
    checkSandbox(actor, id, connection);
    return connection!;
  };
  const errors = { ...authErrors, 404: t.Union([CodedError, StandardError]), 422: StandardError };
  // A simulated contact edits or deletes one of their messages: the driver gets the network's event.
  const changeByContact = async (
    actor: Actor,
    connectionId: string,
    messageId: string,
    set: { status?: number | string },
    event: 'messages.edited' | 'messages.delete',
    change: Record<string, unknown>,
  ) => {
    const connection = await sandboxConnection(actor, connectionId);
    const message = await poolMessagingStores(ctx).messages.findByExternalId(connection.id, messageId);
    if (!message) throw notFound('No message with that network id');
    await driverEventsFor(ctx, connection.id).passthrough(event, message.remoteJid, { key: { id: messageId, remoteJid: message.remoteJid, fromMe: false }, ...change });
    set.status = 201;
    return { ok: true as const };
  };

  return new Elysia({ name: 'routes.sandbox', prefix: '/v3/connections/:id/sandbox', detail: { tags: ['Sandbox network'] } })
    .use(authentication(ctx))
    .guard({ auth: true, role: ['connections', 'write'], params: t.Object({ id: t.String() }) }, (app) =>
      app
        .post(
          '/messages',
          async ({ actor, params, body, set }) => {
            authorize(actor.roles, 'connections', 'write');
            const received = simulatedMessage(body, ctx.clock.now());
            // What the driver's `events.message` does (driver-events.ts), with the stored message
            // back; the connection is checked as the batch reads it.
            const outcome = await receiveBatcher(ctx).receive(params.id, received, (connection) => checkSandbox(actor, params.id, connection));
            const stored = outcome.stored ? outcome.message : await poolMessagingStores(ctx).messages.findByExternalId(params.id, received.externalId);
            set.status = 201;
            return presentMessage(stored!);
          },
          {
            body: t.Object({
              from: t.String({ description: 'The simulated contact’s number' }),
              pushName: t.Optional(t.String()),
              type: t.Optional(t.String({ description: 'A 2.13 messageType (default conversation); another value simulates an unknown type' })),
              text: t.Optional(t.String({ description: 'Text of a conversation, or caption of media' })),
              node: t.Optional(t.Record(t.String(), t.Any(), { description: 'Fields of the message node' })),
              media: t.Optional(t.Object({ base64: t.String(), mimetype: t.String(), fileName: t.Optional(t.String()) })),
              replyTo: t.Optional(t.String({ description: 'Network id of the quoted message' })),
              mentions: t.Optional(t.Array(t.String())),
              album: t.Optional(t.Object({ id: t.String(), index: t.Integer({ minimum: 0 }) })),
              isAiMessage: t.Optional(t.Boolean()),
              source: t.Optional(OneOf(['android', 'ios', 'web', 'unknown'])),
              fromMe: t.Optional(t.Boolean()),
              externalId: t.Optional(t.String({ description: 'Reuse a network id to replay a delivery (stored once)' })),
              timestamp: t.Optional(t.Integer({ description: 'Unix seconds' })),
            }),
            response: { ...errors, 201: MessageView },
            detail: { summary: 'A simulated contact sends a message' },
          },
        )
        .post(
          '/receipts',
          async ({ actor, params, body, set }) => {
            const connection = await sandboxConnection(actor, params.id);
            const stores = poolMessagingStores(ctx);
            const message = (await stores.messages.get(body.messageId)) ?? (await stores.messages.findByExternalId(connection.id, body.messageId));
            if (!message || message.connectionId !== connection.id || !message.externalId) throw notFound('No message with that id has reached the sandbox network');
            const status = body.status as DeliveryStatus;
            await driverEventsFor(ctx, connection.id).receipt({ externalId: message.externalId, remoteJid: message.remoteJid, status, error: body.error });
            set.status = 201;
            return presentMessage((await stores.messages.get(message.id))!);
          },
          {
            body: t.Object({
              messageId: t.String({ description: 'Our id or the network id of a sent message' }),
              status: t.UnionEnum(DELIVERY_STATUSES.filter((s) => s !== 'PENDING') as ['SENT', 'DELIVERED', 'READ', 'FAILED']),
              error: t.Optional(t.Object({ code: t.Union([t.String(), t.Number()]), title: t.String() })),
            }),
            response: { ...errors, 201: MessageView },
            detail: { summary: 'The network reports a delivery status for a sent message' },
          },
        )
        .post(
          '/presence',
          async ({ actor, params, body, set }) => {
            const connection = await sandboxConnection(actor, params.id);
            const jid = `${normalizeRecipient(body.from, 'body.from')}@s.whatsapp.net`;
            await driverEventsFor(ctx, connection.id).passthrough('presence.update', jid, { id: jid, presences: { [jid]: { lastKnownPresence: body.presence } } });
            set.status = 201;
            return { ok: true as const };
          },
          {
            body: t.Object({ from: t.String(), presence: t.UnionEnum(['available', 'unavailable', 'composing', 'recording', 'paused']) }),
            response: { ...errors, 201: Ok },
            detail: { summary: 'A simulated contact comes online or types' },
          },
        )
        .post(
          '/edits',
          ({ actor, params, body, set }) => changeByContact(actor, params.id, body.messageId, set, 'messages.edited', { editedMessage: { conversation: body.text } }),
          {
            body: t.Object({ messageId: t.String({ description: 'Network id of the contact’s message' }), text: t.String() }),
            response: { ...errors, 201: Ok },
            detail: { summary: 'A simulated contact edits a message' },
          },
        )
        .post('/deletes', ({ actor, params, body, set }) => changeByContact(actor, params.id, body.messageId, set, 'messages.delete', {}), {
          body: t.Object({ messageId: t.String() }),
          response: { ...errors, 201: Ok },
          detail: { summary: 'A simulated contact deletes a message for everyone' },
        })
    );
}

/** The caller's workspace's sandbox connection, CONNECTED: 404 or 422 otherwise. */
function checkSandbox(actor: Actor, id: string, connection: Connection | undefined): void {
  if (!connection || connection.workspaceId !== actor.workspaceId) throw connectionNotFound(id);
  if (connection.driver !== 'sandbox') throw notFound('Sandbox endpoints exist only on sandbox connections');
  if (connection.status !== 'CONNECTED') throw new DomainError('unprocessable', `The connection is ${connection.status}; connect it first`);
}
