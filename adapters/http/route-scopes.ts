import type { Scope } from '../../core/oauth/scopes.ts';

/**
 * Which OAuth scopes open which route (spec 2.7, 5.3): the one place every authenticated
 * route declares its scope; plugins extend it with their own rows (`Plugin.routeScopes`).
 *
 * - a list of scopes: a bearer token needs one of them (on top of the person's role);
 * - `[]`: any valid bearer token (the MCP endpoint, whose tools check their own scopes);
 * - `null`: closed to OAuth clients ("this operation is not available to OAuth clients").
 *
 * A route missing from the table is closed to OAuth clients; a test walks every route.
 */
export interface RouteScope {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  scopes: Scope[] | null;
}

export type RouteScopeTable = ReadonlyMap<string, Scope[] | null>;

export const BASE_ROUTE_SCOPES: RouteScope[] = [
  { method: 'GET', path: '/v3/accounts', scopes: ['profile'] },
  { method: 'PATCH', path: '/v3/accounts/:id', scopes: null },
  { method: 'GET', path: '/v3/summary', scopes: ['stats:read'] },

  { method: 'GET', path: '/v3/api-tokens', scopes: null },
  { method: 'POST', path: '/v3/api-tokens', scopes: null },
  { method: 'PATCH', path: '/v3/api-tokens/:id', scopes: null },
  { method: 'DELETE', path: '/v3/api-tokens/:id', scopes: null },

  { method: 'GET', path: '/v3/members', scopes: null },
  { method: 'POST', path: '/v3/members', scopes: null },
  { method: 'PATCH', path: '/v3/members/:userId', scopes: null },
  { method: 'DELETE', path: '/v3/members/:userId', scopes: null },
  { method: 'POST', path: '/v3/members/:userId/password-reset', scopes: null },
  { method: 'GET', path: '/v3/members/invitations', scopes: null },
  { method: 'DELETE', path: '/v3/members/invitations/:id', scopes: null },
  // A person's sign-in sessions are theirs, not an app's: no OAuth client reads or ends them.
  { method: 'GET', path: '/v3/session', scopes: null },
  { method: 'GET', path: '/v3/sessions', scopes: null },
  { method: 'DELETE', path: '/v3/sessions', scopes: null },
  { method: 'DELETE', path: '/v3/sessions/:id', scopes: null },
  { method: 'DELETE', path: '/v3/members/:userId/sessions', scopes: null },

  { method: 'GET', path: '/v3/oauth/consents', scopes: null },
  { method: 'DELETE', path: '/v3/oauth/consents/:id', scopes: null },
  { method: 'GET', path: '/v3/oauth/clients', scopes: null },
  { method: 'POST', path: '/v3/oauth/clients', scopes: null },
  { method: 'GET', path: '/v3/oauth/clients/:clientId', scopes: null },
  { method: 'PATCH', path: '/v3/oauth/clients/:clientId', scopes: null },
  { method: 'DELETE', path: '/v3/oauth/clients/:clientId', scopes: null },

  ...catalogueRouteScopes('/v3/connections', { read: ['connections:read'], write: ['connections:write'] }),
  { method: 'POST', path: '/v3/connections/:id/connect', scopes: ['connections:connect'] },
  { method: 'POST', path: '/v3/connections/:id/disconnect', scopes: ['connections:connect'] },
  { method: 'POST', path: '/v3/connections/:id/logout', scopes: ['connections:connect'] },
  // Asking for a sync token is pairing a number (spec 2.7: "Pair and disconnect a number").
  { method: 'POST', path: '/v3/connections/:id/sync-session', scopes: ['connections:connect'] },

  { method: 'GET', path: '/v3/connections/:id/chats', scopes: ['messages:read'] },
  { method: 'GET', path: '/v3/connections/:id/chats/messages', scopes: ['messages:read'] },
  { method: 'GET', path: '/v3/connections/:id/chats/messages/:messageId', scopes: ['messages:read'] },
  { method: 'POST', path: '/v3/connections/:id/chats/messages', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/connections/:id/chats/messages/send-template', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/connections/:id/media', scopes: ['messages:send'] },

  // Templates (spec 4.3): reading them is reading the connection's setup (connections:read,
  // which connections:write also satisfies); creating, deleting and uploading their media is
  // part of sending templates (spec 2.7: messages:send "Send … template").
  { method: 'GET', path: '/v3/connections/:id/templates', scopes: ['connections:read'] },
  { method: 'GET', path: '/v3/connections/:id/templates/:templateId', scopes: ['connections:read'] },
  { method: 'POST', path: '/v3/connections/:id/templates', scopes: ['messages:send'] },
  { method: 'DELETE', path: '/v3/connections/:id/templates/:templateId', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/connections/:id/templates/header-media', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/connections/:id/templates/send-media', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/connections/:id/media/tickets', scopes: ['messages:send'] },

  // The simulated contact's side of a sandbox connection: setting up the connection's network.
  { method: 'POST', path: '/v3/connections/:id/sandbox/messages', scopes: ['connections:write'] },
  { method: 'POST', path: '/v3/connections/:id/sandbox/receipts', scopes: ['connections:write'] },
  { method: 'POST', path: '/v3/connections/:id/sandbox/presence', scopes: ['connections:write'] },
  { method: 'POST', path: '/v3/connections/:id/sandbox/edits', scopes: ['connections:write'] },
  { method: 'POST', path: '/v3/connections/:id/sandbox/deletes', scopes: ['connections:write'] },

  ...catalogueRouteScopes('/v3/webhooks', { read: ['webhooks:read'], write: ['webhooks:write'] }),
  { method: 'GET', path: '/v3/webhooks/:id/deliveries', scopes: ['webhooks:read'] },
  { method: 'GET', path: '/v3/webhooks/:id/secret', scopes: ['webhooks:write'] },
  { method: 'POST', path: '/v3/webhooks/:id/secret/rotate', scopes: ['webhooks:write'] },
  { method: 'POST', path: '/v3/webhooks/:id/deliveries/:deliveryId/redeliver', scopes: ['webhooks:write'] },

  { method: 'POST', path: '/v3/mcp', scopes: [] },
  { method: 'GET', path: '/v3/mcp', scopes: [] },
  { method: 'DELETE', path: '/v3/mcp', scopes: [] },
];

/**
 * The rows of a catalogue's five routes (list and create on the prefix; read, change and delete
 * one item at `/:id`): reading needs one of `read`, the changes one of `write`.
 */
export function catalogueRouteScopes(prefix: string, scopes: { read: Scope[]; write: Scope[] }): RouteScope[] {
  const item = `${prefix}/:id`;
  return [
    { method: 'GET', path: prefix, scopes: scopes.read },
    { method: 'GET', path: item, scopes: scopes.read },
    { method: 'POST', path: prefix, scopes: scopes.write },
    { method: 'PATCH', path: item, scopes: scopes.write },
    { method: 'DELETE', path: item, scopes: scopes.write },
  ];
}

export function routeScopeTable(rows: readonly RouteScope[]): RouteScopeTable {
  const table = new Map<string, Scope[] | null>();
  for (const row of rows) {
    const key = routeKey(row.method, row.path);
    if (table.has(key)) throw new Error(`Route ${key} declares its OAuth scope twice`);
    table.set(key, row.scopes);
  }
  return table;
}

export function routeKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}
