import { Elysia } from 'elysia';
import type { HelpdeskFeature } from '../feature.ts';
import * as helpdesk0013 from '../migrations/0013_csat.ts';
import { csatPages } from './page.ts';
import { CSAT_ROUTE_SCOPES, csatRoutes } from './routes.ts';
import { CSAT_SUBSCRIBERS } from './subscriber.ts';

/**
 * Customer satisfaction (issue 7 item 3; spec 4.5, 5.6): a per-inbox setting, the survey link
 * sent when a conversation is resolved, the public survey page, `helpdesk.csat.response_received`
 * and the list of answers for managers. The pages need no credential (not in the scope table).
 */
export const csatFeature: HelpdeskFeature = {
  migrations: { '0013_csat': helpdesk0013 },
  routes: (ctx) => new Elysia({ name: 'plugins.helpdesk.csat.feature' }).use(csatRoutes(ctx)).use(csatPages(ctx)),
  routeScopes: CSAT_ROUTE_SCOPES,
  subscribers: CSAT_SUBSCRIBERS,
};
