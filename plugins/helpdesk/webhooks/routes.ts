import { Elysia, t } from 'elysia';
import {
  createHelpdeskWebhook,
  deleteHelpdeskWebhook,
  getHelpdeskWebhook,
  helpdeskWebhookDeliveries,
  listHelpdeskWebhooks,
  redeliverHelpdeskDelivery,
  SIGNING_SECRET_LENGTH,
  testHelpdeskWebhook,
  updateHelpdeskWebhook,
  type HelpdeskWebhook,
} from '../../../core/helpdesk/webhooks/helpdesk-webhooks.ts';
import { HELPDESK_EVENT_TYPES } from '../../../core/helpdesk/events.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { authentication } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, iso, PageOf, PageQuery, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { DELIVERY_HISTORY_ROUTE, presentDelivery, REDELIVERY_ROUTE } from '../../kernel/webhooks.ts';
import { messagingStores } from '../../kernel/storage.ts';
import { dispatchDeps } from '../../kernel/webhooks.ts';
import { webhookSender } from '../../kernel/webhooks.ts';
import { helpdeskWebhookStores } from './use-case-stores.ts';

const HelpdeskWebhookView = t.Object({
  id: Uuid,
  url: t.String(),
  subscriptions: t.Array(t.String()),
  inboxId: t.Nullable(Uuid),
  signingSecretChosen: t.Boolean({ description: 'False when the service generated the secret: it is never returned, so signatures cannot be verified' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Settings = {
  url: t.String({ description: 'Absolute http(s) URL that receives the deliveries; private, loopback, link-local and internal addresses are refused (400) unless OUTBOUND_ALLOW exempts them' }),
  subscriptions: t.Array(t.String(), { description: `Event types: ${HELPDESK_EVENT_TYPES.join(', ')}` }),
  inboxId: t.Optional(t.Nullable(t.String({ description: 'Only events of this inbox; omitted or null: the whole workspace' }))),
  signingSecret: t.Optional(
    t.String({ description: `${SIGNING_SECRET_LENGTH.min} to ${SIGNING_SECRET_LENGTH.max} characters; keys X-Helpdesk-Signature. Never returned; if omitted one is generated and never shown` }),
  ),
};

const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };

/** Helpdesk webhooks (spec 2.9, 4.4, 6.5): settings, a test request, delivery history. */
export function helpdeskWebhookRoutes(ctx: PluginContext) {
  const stores = () => helpdeskWebhookStores(ctx.db, ctx);
  const inTransaction = <T>(work: (s: ReturnType<typeof helpdeskWebhookStores>) => Promise<T>) => ctx.db.transaction().execute((trx) => work(helpdeskWebhookStores(trx, ctx)));

  return new Elysia({ name: 'plugins.helpdesk.webhooks', prefix: '/v3/helpdesk/webhooks', detail: { tags: ['Helpdesk'] } })
    .use(authentication(ctx))
    .guard({ auth: true, role: 'helpdesk.configure' }, (app) =>
      app
        .post(
          '',
          async ({ actor, body, set }) => {
            const webhook = await inTransaction((s) => createHelpdeskWebhook(s, ctx, actor, body));
            set.status = 201;
            return present(webhook);
          },
          {
            body: t.Object(Settings),
            response: { ...authErrors, 201: HelpdeskWebhookView },
            detail: { summary: 'Create a helpdesk webhook (Owner, Admin, Manager; PRO plan)' },
          },
        )
        .get(
          '',
          async ({ actor, query }) => {
            const found = await listHelpdeskWebhooks(stores(), actor, pageRequest(query));
            return { ...found, data: found.data.map(present) };
          },
          { query: PageQuery, response: { ...authErrors, 200: PageOf(HelpdeskWebhookView) }, detail: { summary: 'Helpdesk webhooks of the workspace (`s` searches the URL)' } },
        )
        .get('/:id', async ({ actor, params }) => present(await getHelpdeskWebhook(stores(), actor, params.id)), {
          params: Id,
          response: { ...authErrors, ...NotFound, 200: HelpdeskWebhookView },
          detail: { summary: 'One helpdesk webhook' },
        })
        .patch('/:id', async ({ actor, params, body }) => present(await inTransaction((s) => updateHelpdeskWebhook(s, ctx, actor, params.id, body))), {
          params: Id,
          body: t.Object({ ...Settings, url: t.Optional(Settings.url), subscriptions: t.Optional(Settings.subscriptions) }),
          response: { ...authErrors, ...NotFound, 200: HelpdeskWebhookView },
          detail: { summary: 'Change a helpdesk webhook (PRO plan); fields left out keep their value; a new signingSecret signs from now on' },
        })
        .delete(
          '/:id',
          async ({ actor, params }) => {
            await inTransaction((s) => deleteHelpdeskWebhook(s, actor, params.id));
            return { id: params.id, deleted: true as const };
          },
          {
            params: Id,
            response: { ...authErrors, ...NotFound, 200: t.Object({ id: t.String(), deleted: t.Literal(true) }) },
            detail: { summary: 'Delete a helpdesk webhook and its delivery history (PRO plan)' },
          },
        )
        .post('/:id/test', async ({ actor, params, set }) => {
          set.status = 201;
          return testHelpdeskWebhook(stores(), ctx, webhookSender(ctx.outbound), actor, params.id);
        }, {
          params: Id,
          body: t.Optional(t.Object({}, { description: 'No fields' })),
          response: {
            ...authErrors,
            ...NotFound,
            201: t.Object({
              status: t.Nullable(t.Integer({ description: 'The HTTP status the endpoint answered; null when it did not answer' })),
              durationMs: t.Integer(),
              error: t.Optional(t.String({ description: 'Why there was no answer: "refused by the outbound policy: …" (no request sent) or "delivery failed"' })),
            }),
          },
          detail: {
            summary: 'Send a signed test request now (event helpdesk.webhook.test); not retried, not in the delivery history',
          },
        })
        .get(
          '/:id/deliveries',
          async ({ actor, params, query }) => {
            const found = await helpdeskWebhookDeliveries(stores(), actor, params.id, pageRequest(query));
            return { ...found, data: found.data.map(presentDelivery) };
          },
          DELIVERY_HISTORY_ROUTE,
        )
        .post(
          '/:id/deliveries/:deliveryId/redeliver',
          async ({ actor, params, set }) => {
            set.status = 201;
            const delivery = await inTransaction((s) => redeliverHelpdeskDelivery(s, dispatchDeps(ctx), actor, params.id, params.deliveryId));
            return presentDelivery({ ...delivery, attemptLog: [] });
          },
          REDELIVERY_ROUTE,
        ),
    );
}

function present(w: HelpdeskWebhook) {
  return {
    id: w.id,
    url: w.url,
    subscriptions: w.subscriptions,
    inboxId: w.inboxId,
    signingSecretChosen: w.secretChosen,
    createdAt: iso(w.createdAt),
    updatedAt: iso(w.updatedAt),
  };
}
