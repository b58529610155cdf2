import type { Plugin } from '../kernel/plugin.ts';
import type { RouteScope } from '../kernel/http.ts';
import * as flows0001 from './migrations/0001_flows.ts';
import { flowRoutes } from './routes.ts';

/**
 * OAuth scopes of the Flow routes: sending a Flow is sending a message; creating Flows and
 * provisioning the number's encryption key configure the connection. The data-exchange
 * endpoint takes no apikey (the platform's signature and encryption are its credential).
 */
export const FLOW_ROUTE_SCOPES: RouteScope[] = [
  { method: 'POST', path: '/v3/connections/:id/chats/messages/send-flow', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/connections/:id/flows', scopes: ['connections:write'] },
  { method: 'PUT', path: '/v3/connections/:id/flows-encryption', scopes: ['connections:write'] },
  { method: 'GET', path: '/v3/connections/:id/flows-encryption', scopes: ['connections:read'] },
];

/**
 * Flows (issue 9 items 3–5; spec 4.3, 6.2): in-chat forms on official connections, their
 * encryption key per phone number and the encrypted data-exchange endpoint.
 */
export const flowsPlugin: Plugin = {
  name: 'flows',
  migrations: { '0001_flows': flows0001 },
  routes: flowRoutes,
  routeScopes: FLOW_ROUTE_SCOPES,
};
