import { Elysia } from 'elysia';
import type { Plugin } from '../kernel/plugin.ts';
import type { PluginContext } from '../kernel/context.ts';
import type { RouteScope } from '../kernel/http.ts';
import { v2Routes } from './routes.ts';
import { v2TemplateAndVerificationRoutes } from './templates-verifications.ts';
import { v2Jobs } from './jobs.ts';

/** OAuth scopes of the v2 routes: those of their v3 counterparts. */
export const V2_ROUTE_SCOPES: RouteScope[] = [
  { method: 'GET', path: '/v2/connections', scopes: ['connections:read'] },
  { method: 'GET', path: '/v2/connections/:id', scopes: ['connections:read'] },
  { method: 'GET', path: '/v2/connections/:id/chats', scopes: ['messages:read'] },
  { method: 'POST', path: '/v2/connections/:id/chats/:remoteJid/presence', scopes: ['messages:send'] },
  { method: 'POST', path: '/v2/connections/:id/chats/:remoteJid/messages', scopes: ['messages:send'] },
  { method: 'GET', path: '/v2/connections/:id/chats/:remoteJid/messages', scopes: ['messages:read'] },
  { method: 'GET', path: '/v2/connections/:id/chats/:remoteJid/messages/:messageId/media', scopes: ['messages:read'] },
  { method: 'GET', path: '/v2/connections/:id/templates', scopes: ['connections:read'] },
  { method: 'POST', path: '/v2/connections/:id/templates', scopes: ['messages:send'] },
  { method: 'POST', path: '/v2/connections/:id/verifications', scopes: ['messages:send'] },
  { method: 'POST', path: '/v2/verifications', scopes: ['messages:send'] },
];

/**
 * The frozen previous interface (issue 10; spec 9, 4.7): the same API key, errors, credits and
 * permissions as v3, the recipient in the path, plain shapes that never change.
 */
export const v2Plugin: Plugin = {
  name: 'v2',
  routes: (ctx: PluginContext) => new Elysia({ name: 'plugins.v2.all' }).use(v2Routes(ctx)).use(v2TemplateAndVerificationRoutes(ctx)),
  routeScopes: V2_ROUTE_SCOPES,
  jobs: v2Jobs,
};
