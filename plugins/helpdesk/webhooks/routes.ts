import { t } from 'elysia';
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
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import { authentication } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, iso, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { deliveryRoutes, dispatchDeps, webhookSender } from '../../kernel/webhooks.ts';
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
  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.webhooks',
    prefix: '/v3/helpdesk/webhooks',
    tags: ['Helpdesk'],
    role: 'helpdesk.configure',
    stores: helpdeskWebhookStores,
    view: HelpdeskWebhookView,
    present,
    create: {
      body: t.Object(Settings),
      run: (s, actor, body) => createHelpdeskWebhook(s, ctx, actor, body),
      summary: 'Create a helpdesk webhook (Owner, Admin, Manager; PRO plan)',
    },
    list: { run: listHelpdeskWebhooks, summary: 'Helpdesk webhooks of the workspace (`s` searches the URL)' },
    get: { run: getHelpdeskWebhook, errors: NotFound, summary: 'One helpdesk webhook' },
    update: {
      body: t.Object({ ...Settings, url: t.Optional(Settings.url), subscriptions: t.Optional(Settings.subscriptions) }),
      run: (s, actor, id, body) => updateHelpdeskWebhook(s, ctx, actor, id, body),
      errors: NotFound,
      summary: 'Change a helpdesk webhook (PRO plan); fields left out keep their value; a new signingSecret signs from now on',
    },
    remove: { run: deleteHelpdeskWebhook, errors: NotFound, summary: 'Delete a helpdesk webhook and its delivery history (PRO plan)' },
  })
    .guard({ auth: true, role: 'helpdesk.configure' }, (app) =>
      app.post(
        '/:id/test',
        async ({ actor, params, set }) => {
          set.status = 201;
          return testHelpdeskWebhook(ctx.storage.read(helpdeskWebhookStores), ctx, webhookSender(ctx.outbound), actor, params.id);
        },
        {
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
        },
      ),
    )
    .use(
      deliveryRoutes({
        authentication: authentication(ctx),
        role: 'helpdesk.configure',
        storage: ctx.storage,
        stores: helpdeskWebhookStores,
        dispatch: dispatchDeps(ctx),
        history: helpdeskWebhookDeliveries,
        redeliver: redeliverHelpdeskDelivery,
      }),
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
