/**
 * The host's webhook delivery engine as plugins use it: their kinds of webhook are delivery
 * targets (`Plugin.deliveryTargets`), delivered with the base's retries and history; every call to
 * a customer's URL goes through the outbound policy.
 */
import { dispatchDeps as hostDispatchDeps } from '../../adapters/webhooks/jobs.ts';
import { onPluginContext } from './host.ts';

export type { DeliveryTargetFinder } from '../../adapters/webhooks/endpoints.ts';
export { deliveryStore, webhookStore } from '../../adapters/postgres/repositories/webhook-store.ts';
/** A kind of webhook's delivery history and redelivery routes (`Plugin` routers `.use` them last). */
export { deliveryRoutes, DELIVERY_HISTORY_ROUTE, presentDelivery } from '../../adapters/http/routes/webhook-deliveries.ts';
export { outboundPost, webhookSender } from '../../adapters/webhooks/http-sender.ts';
export { OutboundRefusal, type Outbound } from '../../adapters/outbound/outbound.ts';
/** What fanning an event out to webhooks needs (clock, ids, the delivery queue). */
export const dispatchDeps = onPluginContext(hostDispatchDeps);
