import type { HelpdeskFeature } from '../feature.ts';
import * as helpdesk0010 from '../migrations/0010_assignment.ts';
import { assignmentRoutes } from './routes.ts';
import { onConversationCreated } from './subscriber.ts';

/**
 * Issue 7 item 1: members' availability over REST (spec 3.7, 4.6) and round-robin assignment of
 * new conversations per inbox (core/helpdesk/assignment/round-robin.ts, auto-assignment.ts).
 */
export const assignmentFeature: HelpdeskFeature = {
  migrations: { '0010_assignment': helpdesk0010 },
  routes: assignmentRoutes,
  routeScopes: [
    { method: 'GET', path: '/v3/helpdesk/profile/availability', scopes: ['helpdesk:read'] },
    { method: 'PATCH', path: '/v3/helpdesk/profile/availability', scopes: ['helpdesk:write'] },
    { method: 'GET', path: '/v3/helpdesk/inboxes/:id/assignment', scopes: ['helpdesk:read'] },
    { method: 'PUT', path: '/v3/helpdesk/inboxes/:id/assignment', scopes: ['helpdesk:write'] },
  ],
  subscribers: [{ event: 'helpdesk.conversation.created', handle: onConversationCreated }],
};
