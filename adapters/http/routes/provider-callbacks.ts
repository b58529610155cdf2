import { Elysia, t } from 'elysia';
import { DomainError, notFound } from '../../../core/shared/errors.ts';
import { driverView } from '../../../core/messaging/deliver.ts';
import { driverEventsFor } from '../../connections/driver-events.ts';
import { poolMessagingStores } from '../../connections/stores.ts';
import type { AppContext } from '../context.ts';
import { bodyLimits, readText } from '../body.ts';
import { StandardError } from '../schemas.ts';

export const PROVIDER_CALLBACK_PREFIX = '/v3/webhooks/whatsapp';

/** The platform batches events per POST (a few KB each); 4 MiB leaves room for a full batch. */
const CALLBACK_MIN_BYTES = 4 * 1024 * 1024;

/**
 * The network provider's callbacks (spec 4.5, 5.6): `GET` answers the verify handshake,
 * `POST` is checked against the app secret over the raw body before anything is stored.
 */
export function providerCallbackRoutes(ctx: AppContext) {
  const callbacksOf = async (connectionId: string) => {
    const connection = await poolMessagingStores(ctx).connections.find(connectionId);
    const callbacks = connection && ctx.drivers.get(connection.driver)?.callbacks;
    if (!connection || !callbacks) throw notFound('No connection here takes provider callbacks');
    return { connection, callbacks };
  };

  return new Elysia({ name: 'routes.provider-callbacks', prefix: PROVIDER_CALLBACK_PREFIX, detail: { tags: ['Provider callbacks'] } })
    .get(
      '/:connectionId',
      async ({ params, query }) => {
        const { connection, callbacks } = await callbacksOf(params.connectionId);
        const challenge = callbacks.verify(driverView(connection), query);
        if (challenge === undefined) throw new DomainError('forbidden', 'Verify token does not match');
        return new Response(challenge, { headers: { 'content-type': 'text/plain' } });
      },
      {
        params: t.Object({ connectionId: t.String() }),
        query: t.Record(t.String(), t.String()),
        response: { 200: t.String({ description: 'hub.challenge echoed' }), 403: StandardError, 404: StandardError },
        detail: { summary: 'Verify handshake (hub.mode, hub.verify_token, hub.challenge)' },
      },
    )
    .post(
      '/:connectionId',
      async ({ params, request }) => {
        // Bounded and read before anything is looked up: a batch of platform events is larger
        // than an API body, so callbacks take at least CALLBACK_MIN_BYTES.
        const raw = await readText(request, Math.max(bodyLimits(ctx.config).body, CALLBACK_MIN_BYTES));
        const { connection, callbacks } = await callbacksOf(params.connectionId);
        const headers: Record<string, string> = {};
        request.headers.forEach((value, name) => (headers[name] = value));
        if (!callbacks.authentic(driverView(connection), raw, headers)) throw new DomainError('unauthenticated', 'Invalid x-hub-signature-256');
        let payload: unknown;
        try {
          payload = JSON.parse(raw);
        } catch {
          throw new DomainError('invalid_input', 'Callback body is not JSON');
        }
        await callbacks.ingest(driverView(connection), payload, driverEventsFor(ctx, connection.id));
        return { received: true as const };
      },
      {
        parse: 'none',
        params: t.Object({ connectionId: t.String() }),
        response: { 200: t.Object({ received: t.Literal(true) }), 400: StandardError, 401: StandardError, 404: StandardError },
        detail: {
          summary: 'Provider callback: messages and statuses, signed with the app secret',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', description: 'The provider’s webhook payload (object, entry[].changes[].value)' } } },
          },
        },
      },
    );
}
