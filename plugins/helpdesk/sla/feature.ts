import { Elysia } from 'elysia';
import type { RouteScope } from '../../kernel/http.ts';
import type { HelpdeskFeature } from '../feature.ts';
import * as helpdesk0012 from '../migrations/0012_sla.ts';
import { conversationSlaRoutes } from './conversation-routes.ts';
import { inboxHoursRoutes } from './hours-routes.ts';
import { slaJobs } from './jobs.ts';
import { slaPolicyRoutes } from './policy-routes.ts';
import { SLA_SUBSCRIBERS } from './subscribers.ts';

/** Business hours and SLA policies are helpdesk settings: `helpdesk:read` / `helpdesk:write`. */
const SLA_ROUTE_SCOPES: RouteScope[] = [
  { method: 'GET', path: '/v3/helpdesk/inboxes/:id/business-hours', scopes: ['helpdesk:read'] },
  { method: 'PUT', path: '/v3/helpdesk/inboxes/:id/business-hours', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/inboxes/:id/out-of-office', scopes: ['helpdesk:read'] },
  { method: 'PUT', path: '/v3/helpdesk/inboxes/:id/out-of-office', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/sla-policies', scopes: ['helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/sla-policies', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/sla-policies/:id', scopes: ['helpdesk:read'] },
  { method: 'PATCH', path: '/v3/helpdesk/sla-policies/:id', scopes: ['helpdesk:write'] },
  { method: 'DELETE', path: '/v3/helpdesk/sla-policies/:id', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/conversations/:id/sla', scopes: ['helpdesk:read'] },
  { method: 'PATCH', path: '/v3/helpdesk/conversations/:id/sla', scopes: ['helpdesk:write'] },
];

/**
 * Issue 7 item 2: business hours per inbox (in its timezone), SLA policies (first response, next
 * response, resolution) measured in business time, each conversation's timing and SLA rounds,
 * `helpdesk.sla.missed` when a round is missed (webhooks only), and the out-of-office reply.
 */
export const slaFeature: HelpdeskFeature = {
  migrations: { '0012_sla': helpdesk0012 },
  routes: (ctx) => new Elysia({ name: 'plugins.helpdesk.sla.feature' }).use(inboxHoursRoutes(ctx)).use(slaPolicyRoutes(ctx)).use(conversationSlaRoutes(ctx)),
  routeScopes: SLA_ROUTE_SCOPES,
  jobs: slaJobs,
  subscribers: SLA_SUBSCRIBERS,
};
