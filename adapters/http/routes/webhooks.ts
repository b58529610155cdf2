import { Elysia, t } from 'elysia';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
  webhookSecret,
} from '../../../core/webhooks/webhooks.ts';
import { listDeliveries, redeliverDelivery, type Delivery, type DeliveryAttempt } from '../../../core/webhooks/dispatch.ts';
import { CONNECTION_EVENTS, type Webhook } from '../../../core/webhooks/webhook.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { messagingStores } from '../../connections/stores.ts';
import { dispatchDeps } from '../../webhooks/jobs.ts';
import { authentication } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { authErrors, iso, PageOf, PageQuery, StandardError, Timestamp, Uuid } from '../schemas.ts';

const WebhookView = t.Object({
  id: Uuid,
  url: t.String(),
  events: t.Array(t.String()),
  connections: t.Array(t.String()),
  hmacEnabled: t.Boolean(),
  messageGroupDelay: t.Nullable(t.Integer()),
  enableSimulateTyping: t.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Settings = {
  url: t.String({ description: 'Absolute http(s) URL that receives the deliveries; private, loopback, link-local and internal addresses are refused (400) unless OUTBOUND_ALLOW exempts them' }),
  events: t.Array(t.String(), { description: `Subset of ${CONNECTION_EVENTS.join(', ')}` }),
  connections: t.Optional(t.Array(t.String(), { description: 'Connection ids; without any, the webhook receives nothing' })),
  hmacEnabled: t.Optional(t.Boolean({ description: 'Sign each delivery (X-Switchboard-Signature-256); required for flow.data_exchange' })),
  messageGroupDelay: t.Optional(
    // The range is core's rule (reported with the request's other broken rules); the type is checked here.
    t.Nullable(t.Integer({ description: 'Batching window in seconds (1–300); null turns batching off' }), { error: 'must be an integer from 1 to 300 (seconds) or null' }),
  ),
  enableSimulateTyping: t.Optional(t.Boolean({ description: 'Show "typing…" to the contact during the batching window' })),
};

const AttemptView = t.Object({ attempt: t.Integer(), at: Timestamp, statusCode: t.Nullable(t.Integer()), error: t.Nullable(t.String()), durationMs: t.Integer() });
export const DeliveryView = t.Object({
  id: Uuid,
  event: t.String(),
  eventIds: t.Array(t.String()),
  state: t.UnionEnum(['PENDING', 'RETRYING', 'SUCCEEDED', 'FAILED']),
  attempts: t.Integer(),
  attemptLog: t.Array(AttemptView),
  body: t.String({ description: 'The exact JSON body sent' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };

/** The delivery history routes' schemas, shared by every kind of webhook (one delivery engine). */
export const DELIVERY_HISTORY_ROUTE = {
  params: Id,
  query: PageQuery,
  response: { ...authErrors, ...NotFound, 200: PageOf(DeliveryView) },
  detail: { summary: 'Delivery history, newest first, with every attempt (time, status code or error, duration)' },
};

export const REDELIVERY_ROUTE = {
  params: t.Object({ id: t.String(), deliveryId: t.String() }),
  body: t.Optional(t.Object({}, { description: 'No fields' })),
  response: { ...authErrors, ...NotFound, 201: DeliveryView, 409: StandardError },
  detail: { summary: 'Send a failed delivery again (a fresh round of three attempts)' },
};

/** Connection webhooks (spec 2.8, 4.4, 6.4): settings, signing secret, delivery history. */
export function webhookRoutes(ctx: AppContext) {
  const inTransaction = <T>(work: (stores: ReturnType<typeof messagingStores>) => Promise<T>) =>
    ctx.db.transaction().execute((trx) => work(messagingStores(trx, ctx)));
  const stores = () => messagingStores(ctx.db, ctx);

  return new Elysia({ name: 'routes.webhooks', prefix: '/v3/webhooks', detail: { tags: ['Webhooks'] } })
    .use(authentication(ctx))
    .guard({ auth: true, role: 'connections' }, (app) =>
      app
        .post(
          '',
          async ({ actor, body, set }) => {
            const webhook = await createWebhook(stores(), ctx, actor, body);
            set.status = 201;
            return present(webhook);
          },
          { body: t.Object(Settings), response: { ...authErrors, 201: WebhookView }, detail: { summary: 'Create a connection webhook' } },
        )
        .get(
          '',
          async ({ actor, query }) => {
            const found = await listWebhooks(stores(), actor, pageRequest(query));
            return { ...found, data: found.data.map(present) };
          },
          { query: PageQuery, response: { ...authErrors, 200: PageOf(WebhookView) }, detail: { summary: 'Webhooks of the workspace; `s` searches the URL' } },
        )
        .get('/:id', async ({ actor, params }) => present(await getWebhook(stores(), actor, params.id)), {
          params: Id,
          response: { ...authErrors, ...NotFound, 200: WebhookView },
          detail: { summary: 'One webhook' },
        })
        .patch(
          '/:id',
          async ({ actor, params, body }) => present(await inTransaction((s) => updateWebhook(s, ctx, actor, params.id, body))),
          {
            params: Id,
            body: t.Object({
              url: t.Optional(Settings.url),
              events: t.Optional(Settings.events),
              connections: t.Optional(t.Array(t.String(), { description: 'Replaces the bound connections with exactly these ids ([] unbinds all)' })),
              addConnections: t.Optional(t.Array(t.String(), { description: 'Connection ids to bind in addition to those bound; ids already bound are kept once' })),
              removeConnections: t.Optional(t.Array(t.String(), { description: 'Connection ids to unbind; ids not bound are ignored' })),
              hmacEnabled: Settings.hmacEnabled,
              messageGroupDelay: Settings.messageGroupDelay,
              enableSimulateTyping: Settings.enableSimulateTyping,
            }),
            response: { ...authErrors, ...NotFound, 200: WebhookView },
            detail: {
              summary: 'Change settings; bind or unbind connections',
              description:
                'Fields left out keep their value. Connections: `connections` replaces the bound set; `addConnections` binds more and `removeConnections` unbinds some without resending the list ' +
                '(applied after `connections` when both are sent; an id in both add and remove is 400). Unknown connection ids in `connections` or `addConnections` are 400. ' +
                'Deleting a connection unbinds it from every webhook.',
            },
          },
        )
        .delete(
          '/:id',
          async ({ actor, params }) => {
            await deleteWebhook(stores(), actor, params.id);
            return { id: params.id, deleted: true as const };
          },
          { params: Id, response: { ...authErrors, ...NotFound, 200: t.Object({ id: t.String(), deleted: t.Literal(true) }) }, detail: { summary: 'Delete a webhook' } },
        )
        .get('/:id/secret', async ({ actor, params }) => ({ secret: await webhookSecret(stores(), actor, params.id) }), {
          params: Id,
          response: { ...authErrors, ...NotFound, 200: t.Object({ secret: t.String() }) },
          detail: { summary: 'The signing secret (read once and store it)' },
        })
        .post(
          '/:id/secret/rotate',
          async ({ actor, params, set }) => {
            const secret = await inTransaction((s) => rotateWebhookSecret(s, ctx, actor, params.id));
            set.status = 201;
            return { secret };
          },
          {
            params: Id,
            body: t.Optional(t.Object({}, { description: 'No fields' })),
            response: { ...authErrors, ...NotFound, 201: t.Object({ secret: t.String() }) },
            detail: { summary: 'A new signing secret; the old one stops verifying at once' },
          },
        )
        .get(
          '/:id/deliveries',
          async ({ actor, params, query }) => {
            const found = await listDeliveries(stores(), actor, params.id, pageRequest(query));
            return { ...found, data: found.data.map(presentDelivery) };
          },
          DELIVERY_HISTORY_ROUTE,
        )
        .post(
          '/:id/deliveries/:deliveryId/redeliver',
          async ({ actor, params, set }) => {
            const delivery = await inTransaction((s) => redeliverDelivery(s, dispatchDeps(ctx), actor, params.id, params.deliveryId));
            set.status = 201;
            return presentDelivery({ ...delivery, attemptLog: [] });
          },
          REDELIVERY_ROUTE,
        ),
    );
}

function present(w: Webhook) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    connections: w.connections,
    hmacEnabled: w.hmacEnabled,
    messageGroupDelay: w.messageGroupDelay,
    enableSimulateTyping: w.enableSimulateTyping,
    createdAt: iso(w.createdAt),
    updatedAt: iso(w.updatedAt),
  };
}

export function presentDelivery(d: Delivery & { attemptLog: DeliveryAttempt[] }) {
  return {
    id: d.id,
    event: d.event,
    eventIds: d.eventIds,
    state: d.state,
    attempts: d.attempts,
    attemptLog: d.attemptLog.map((a) => ({ attempt: a.attempt, at: iso(a.at), statusCode: a.statusCode, error: a.error, durationMs: a.durationMs })),
    body: d.body,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
  };
}
