import type { Kysely } from 'kysely';
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

/** Connection webhooks here; every other kind through the enabled plugins' finders. */
export function deliveryEndpoints(db: Kysely<Database>, ctx: AppContext): DeliveryEndpoints {
  return {
    async find(delivery) {
      if (delivery.target === CONNECTION_TARGET) {
        const webhook = await webhookStore(db, ctx.box).find(delivery.webhookId);
        return webhook && connectionEndpoint(webhook, delivery);
      }
      const finder = ctx.deliveryTargets?.get(delivery.target);
      return finder ? finder(db, ctx).find(delivery) : undefined;
    },
  };
}
