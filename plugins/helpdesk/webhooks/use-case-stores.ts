import type { Kysely } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { deliveryStore } from '../../kernel/webhooks.ts';
import type { DeliveryTargetFinder } from '../../kernel/webhooks.ts';
import { helpdeskEndpoint } from '../../../core/helpdesk/webhooks/helpdesk-webhooks.ts';
import { inboxStore, workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { findHelpdeskWebhook, helpdeskWebhookStore } from './webhook-store.ts';

/** The ports of the helpdesk webhook use cases, with the shared delivery engine's stores. */
export function helpdeskWebhookStores(db: Kysely<Database>, ctx: PluginContext) {
  return {
    helpdeskWebhooks: helpdeskWebhookStore(db, ctx.box),
    inboxes: inboxStore(db, ctx.box),
    plans: workspacePlans(db),
    deliveries: deliveryStore(db),
    outbox: ctx.queue.outbox(db),
  };
}

/** How the base's delivery engine finds a helpdesk webhook's endpoint (`Plugin.deliveryTargets`). */
export const helpdeskDeliveryTarget: DeliveryTargetFinder = (db, ctx) => ({
  async find(delivery) {
    const webhook = await findHelpdeskWebhook(db, ctx.box, delivery.webhookId);
    return webhook && helpdeskEndpoint(webhook, delivery);
  },
});
