import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import { redeliverFailed, type Delivery, type DeliveryAttempt, type DispatchDeps, type DispatchStores } from '../../webhooks/dispatch.ts';

/**
 * The delivery history of a helpdesk subscriber (a helpdesk webhook, an agent bot), kept by the
 * delivery engine of connection webhooks: whoever may see the subscriber reads it, newest first
 * with every attempt; managers (`helpdesk.configure`) send a failed delivery again, a fresh round
 * of three attempts. `find` is the subscriber's own read (its capability, its 404).
 */
export function subscriberDeliveries<S>(find: (stores: S, actor: Actor, id: string) => Promise<{ id: string }>) {
  return {
    async list(stores: S & Pick<DispatchStores, 'deliveries'>, actor: Actor, id: string, request: PageRequest): Promise<Page<Delivery & { attemptLog: DeliveryAttempt[] }>> {
      const subscriber = await find(stores, actor, id);
      return stores.deliveries.list(subscriber.id, request);
    },
    async redeliver(stores: S & Pick<DispatchStores, 'deliveries' | 'outbox'>, deps: DispatchDeps, actor: Actor, id: string, deliveryId: string): Promise<Delivery> {
      const subscriber = await find(stores, actor, id);
      authorize(actor.roles, 'helpdesk.configure', 'write');
      return redeliverFailed(stores, deps, subscriber.id, deliveryId);
    },
  };
}
