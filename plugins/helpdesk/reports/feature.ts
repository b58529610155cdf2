import type { HelpdeskFeature } from '../feature.ts';
import * as helpdesk0015 from '../migrations/0015_reports.ts';
import { REPORT_ROUTE_SCOPES, reportRoutes } from './routes.ts';

/**
 * Reports (issue 7 item 5): conversations opened and resolved, first response and resolution
 * times, CSAT and SLA breaches per UTC day, inbox, agent, team and label, as JSON and CSV.
 * Read-only: no jobs, no subscribers (the figures come from the event log and the tables).
 */
export const reportsFeature: HelpdeskFeature = {
  migrations: { '0015_reports': helpdesk0015 },
  routes: reportRoutes,
  routeScopes: REPORT_ROUTE_SCOPES,
};
