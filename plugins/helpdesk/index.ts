import { Elysia } from 'elysia';
import type { Plugin } from '../plugin.ts';
import type { RouteScope } from '../../adapters/http/route-scopes.ts';
import * as helpdesk0001 from './migrations/0001_helpdesk.ts';
import * as helpdesk0002 from './migrations/0002_conversations.ts';
import { conversationRoutes } from './routes/conversations.ts';
import { HELPDESK_SUBSCRIBERS } from './subscribers.ts';
import { contactRoutes } from './routes/contacts.ts';
import { inboxRoutes } from './routes/inboxes.ts';

/**
 * OAuth scopes of the helpdesk routes (spec 2.7). Inboxes: `helpdesk:read` / `helpdesk:write`.
 * Contacts: either the contacts scope or the helpdesk one (`helpdesk:read` is described as
 * "Read helpdesk conversations, contacts and settings"), so an assistant granted only
 * `contacts:*` manages contacts, and one granted `helpdesk:*` works the whole helpdesk.
 */
export const HELPDESK_ROUTE_SCOPES: RouteScope[] = [
  { method: 'GET', path: '/v3/helpdesk/inboxes', scopes: ['helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/inboxes/:id', scopes: ['helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/inboxes/:id/members', scopes: ['helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/inboxes', scopes: ['helpdesk:write'] },
  { method: 'PATCH', path: '/v3/helpdesk/inboxes/:id', scopes: ['helpdesk:write'] },
  { method: 'DELETE', path: '/v3/helpdesk/inboxes/:id', scopes: ['helpdesk:write'] },
  { method: 'PUT', path: '/v3/helpdesk/inboxes/:id/members', scopes: ['helpdesk:write'] },

  { method: 'GET', path: '/v3/helpdesk/contacts', scopes: ['contacts:read', 'helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/contacts/:id', scopes: ['contacts:read', 'helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/contacts', scopes: ['contacts:write', 'helpdesk:write'] },
  { method: 'PATCH', path: '/v3/helpdesk/contacts/:id', scopes: ['contacts:write', 'helpdesk:write'] },

  { method: 'GET', path: '/v3/helpdesk/conversations', scopes: ['helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/conversations/:id', scopes: ['helpdesk:read'] },
  { method: 'PATCH', path: '/v3/helpdesk/conversations/:id', scopes: ['helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/status', scopes: ['helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/labels', scopes: ['helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/read', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/conversations/:id/messages', scopes: ['helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/messages', scopes: ['helpdesk:write'] },
];

/**
 * The shared inbox (spec 1.3–1.6, issue 6): inboxes, inbox members, contacts, conversations and
 * their messages; `messages.upsert` on an inbox's connection opens or continues a conversation.
 */
export const helpdeskPlugin: Plugin = {
  name: 'helpdesk',
  migrations: { '0001_helpdesk': helpdesk0001, '0002_conversations': helpdesk0002 },
  routes: (ctx) => new Elysia({ name: 'plugins.helpdesk' }).use(inboxRoutes(ctx)).use(contactRoutes(ctx)).use(conversationRoutes(ctx)),
  routeScopes: HELPDESK_ROUTE_SCOPES,
  subscribers: HELPDESK_SUBSCRIBERS,
};
