import type { Kysely } from 'kysely';
import { nativeSignDelivery } from '../crypto/native-hmac.ts';
import { CONNECTION_TARGET, connectionEndpoint, type DeliveryEndpoint, type DeliveryEndpoints, type Delivery } from '../../core/webhooks/dispatch.ts';
import type { AppContext } from '../http/context.ts';
import type { Database } from '../postgres/schema.ts';
import { webhookStore } from '../postgres/repositories/webhook-store.ts';

/**
 * How a plugin's kind of webhook is found for a delivery (its current URL and signing), bound to
 * a connection or transaction. Plugins declare theirs (`Plugin.deliveryTargets`).
 */
export type DeliveryTargetFinder = (db: Kysely<Database>, ctx: AppContext) => {
  find(delivery: Pick<Delivery, 'webhookId' | 'id' | 'event'>): Promise<DeliveryEndpoint | undefined>;
};

/**
 * The endpoints of a claimed batch of deliveries: connection webhooks here (each read once),
 * every other kind through the enabled plugins' finders.
 */
export function deliveryEndpoints(db: Kysely<Database>, ctx: AppContext): DeliveryEndpoints {
  const webhooks = webhookStore(db, ctx.box);
  return {
    async findAll(deliveries) {
      const connectionWebhookIds = [...new Set(deliveries.filter((d) => d.target === CONNECTION_TARGET).map((d) => d.webhookId))];
      const byId = new Map((await webhooks.findMany(connectionWebhookIds)).map((w) => [w.id, w]));
      const found = new Map<string, DeliveryEndpoint | undefined>();
      for (const delivery of deliveries) {
        if (delivery.target === CONNECTION_TARGET) {
          const webhook = byId.get(delivery.webhookId);
          found.set(delivery.id, webhook && connectionEndpoint(webhook, delivery, nativeSignDelivery));
          continue;
        }
        const finder = ctx.deliveryTargets?.get(delivery.target);
        found.set(delivery.id, finder ? await finder(db, ctx).find(delivery) : undefined);
      }
      return found;
    },
  };
}
