import { Elysia } from 'elysia';
import type { HelpdeskFeature } from '../feature.ts';
import * as helpdesk0014 from '../migrations/0014_notifications_macros.ts';
import { notificationJobs } from './announce.ts';
import { CANNED_RESPONSE_ROUTE_SCOPES, cannedResponseRoutes } from './canned-response-routes.ts';
import { MACRO_ROUTE_SCOPES, macroRoutes } from './macro-routes.ts';
import { NOTIFICATION_ROUTE_SCOPES, notificationRoutes } from './routes.ts';
import { NOTIFICATION_SUBSCRIBERS } from './subscribers.ts';

/**
 * Issue 7 items 6 and 8: @mentions in private notes (`helpdesk.mention.created`), in-app
 * notifications with `helpdesk.notification.created` to the recipient's room, canned responses
 * and macros.
 */
export const notificationsFeature: HelpdeskFeature = {
  migrations: { '0014_notifications_macros': helpdesk0014 },
  routes: (ctx) => new Elysia({ name: 'plugins.helpdesk.notifications.feature' }).use(notificationRoutes(ctx)).use(cannedResponseRoutes(ctx)).use(macroRoutes(ctx)),
  routeScopes: [...NOTIFICATION_ROUTE_SCOPES, ...CANNED_RESPONSE_ROUTE_SCOPES, ...MACRO_ROUTE_SCOPES],
  jobs: notificationJobs,
  subscribers: NOTIFICATION_SUBSCRIBERS,
};
