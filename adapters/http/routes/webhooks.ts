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
import { listDeliveries, redeliverDelivery } from '../../../core/webhooks/dispatch.ts';
import { CONNECTION_EVENTS, type Webhook } from '../../../core/webhooks/webhook.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { messagingStores } from '../../connections/stores.ts';
import { dispatchDeps } from '../../webhooks/jobs.ts';
import { authentication } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { authErrors, iso, PageOf, PageQuery, presentPage, StandardError, Timestamp, Uuid } from '../schemas.ts';
import { deliveryRoutes } from './webhook-deliveries.ts';

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

const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };

/** Connection webhooks (spec 2.8, 4.4, 6.4): settings, signing secret, delivery history. */
export function webhookRoutes(ctx: AppContext) {
  const auth = authentication(ctx);

  return new Elysia({ name: 'routes.webhooks', prefix: '/v3/webhooks', detail: { tags: ['Webhooks'] } })
    .use(auth)
    .guard({ auth: true, role: 'connections' }, (app) =>
      app
        .post(
          '',
          async ({ actor, body, set }) => {
            const webhook = await createWebhook(ctx.storage.read(messagingStores), ctx, actor, body);
            set.status = 201;
            return present(webhook);
          },
          { body: t.Object(Settings), response: { ...authErrors, 201: WebhookView }, detail: { summary: 'Create a connection webhook' } },
        )
        .get(
          '',
          async ({ actor, query }) => presentPage(await listWebhooks(ctx.storage.read(messagingStores), actor, pageRequest(query)), present),
          { query: PageQuery, response: { ...authErrors, 200: PageOf(WebhookView) }, detail: { summary: 'Webhooks of the workspace; `s` searches the URL' } },
        )
        .get('/:id', async ({ actor, params }) => present(await getWebhook(ctx.storage.read(messagingStores), actor, params.id)), {
          params: Id,
          response: { ...authErrors, ...NotFound, 200: WebhookView },
          detail: { summary: 'One webhook' },
        })
        .patch(
          '/:id',
          async ({ actor, params, body }) => present(await ctx.storage.transaction(messagingStores, (s) => updateWebhook(s, ctx, actor, params.id, body))),
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
            await deleteWebhook(ctx.storage.read(messagingStores), actor, params.id);
            return { id: params.id, deleted: true as const };
          },
          { params: Id, response: { ...authErrors, ...NotFound, 200: t.Object({ id: t.String(), deleted: t.Literal(true) }) }, detail: { summary: 'Delete a webhook' } },
        )
        .get('/:id/secret', async ({ actor, params }) => ({ secret: await webhookSecret(ctx.storage.read(messagingStores), actor, params.id) }), {
          params: Id,
          response: { ...authErrors, ...NotFound, 200: t.Object({ secret: t.String() }) },
          detail: { summary: 'The signing secret (read once and store it)' },
        })
        .post(
          '/:id/secret/rotate',
          async ({ actor, params, set }) => {
            const secret = await ctx.storage.transaction(messagingStores, (s) => rotateWebhookSecret(s, ctx, actor, params.id));
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
    )
    .use(
      deliveryRoutes({
        authentication: auth,
        role: 'connections',
        storage: ctx.storage,
        stores: messagingStores,
        dispatch: dispatchDeps(ctx),
        history: listDeliveries,
        redeliver: redeliverDelivery,
      }),
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
