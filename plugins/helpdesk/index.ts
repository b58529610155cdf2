import { Elysia } from 'elysia';
import type { Plugin } from '../kernel/plugin.ts';
import { catalogueRouteScopes, type RouteScope } from '../kernel/http.ts';
import type { Scope } from '../../core/oauth/scopes.ts';
import * as helpdesk0001 from './migrations/0001_helpdesk.ts';
import * as helpdesk0002 from './migrations/0002_conversations.ts';
import * as helpdesk0004 from './migrations/0004_presence.ts';
import { helpdeskRealtime } from './realtime/namespace.ts';
import { helpdeskGauges } from './realtime/metrics.ts';
import * as helpdesk0003 from './migrations/0003_helpdesk_webhooks.ts';
import { HELPDESK_EVENT_SUBSCRIBERS } from './events/event-subscribers.ts';
import { helpdeskWebhookRoutes } from './webhooks/routes.ts';
import { helpdeskDeliveryTarget } from './webhooks/use-case-stores.ts';
import { HELPDESK_TARGET } from '../../core/helpdesk/webhooks/helpdesk-webhooks.ts';
import { HELPDESK_MCP_TOOLS } from './conversations/mcp-tools.ts';
import * as helpdesk0005 from './migrations/0005_api_channel.ts';
import { apiChannelRoutes } from './api-channel/routes.ts';
import { apiChannelJobs } from './api-channel/jobs.ts';
import { conversationRoutes } from './conversations/routes.ts';
import { HELPDESK_SUBSCRIBERS } from './conversations/subscribers.ts';
import { contactNoteRoutes } from './contacts/note-routes.ts';
import { contactRoutes } from './contacts/routes.ts';
import { inboxRoutes } from './inboxes/routes.ts';
import { inboxTemplateRoutes } from './inboxes/template-routes.ts';
import * as helpdesk0006 from './migrations/0006_teams.ts';
import { teamRoutes } from './teams/routes.ts';
import { helpdeskJobs } from './conversations/snooze-jobs.ts';
import * as helpdesk0007 from './migrations/0007_labels_attachments.ts';
import { labelRoutes } from './labels/routes.ts';
import { attachmentRoutes } from './attachments/routes.ts';
import * as helpdesk0008 from './migrations/0008_inbox_sync.ts';
import * as helpdesk0009 from './migrations/0009_agent_bot_assignee.ts';
import * as helpdesk0016 from './migrations/0016_inbox_queries.ts';
import * as helpdesk0017 from './migrations/0017_contact_notes.ts';
import * as helpdesk0018 from './migrations/0018_inbox_tallies.ts';
import * as helpdesk0019 from './migrations/0019_inbox_walks.ts';
import * as helpdesk0020 from './migrations/0020_contact_inboxes.ts';
import { AUTOMATION_FEATURES } from './automation.ts';
import { inboxSyncRoutes } from './sync/routes.ts';
import { inboxSyncJobs } from './sync/job.ts';
import { AGENT_BOT_TARGET } from '../../core/helpdesk/bots/agent-bot-delivery.ts';
import { agentBotDeliveryTarget } from './bots/use-case-stores.ts';
import { helpdeskContactsAudience } from './contacts/campaign-audience.ts';

/** Reading and changing the helpdesk's own records (inboxes, teams, labels). */
const HELPDESK_SCOPES: { read: Scope[]; write: Scope[] } = { read: ['helpdesk:read'], write: ['helpdesk:write'] };

/**
 * OAuth scopes of the helpdesk routes (spec 2.7). Inboxes: `helpdesk:read` / `helpdesk:write`.
 * Contacts: either the contacts scope or the helpdesk one (`helpdesk:read` is described as
 * "Read helpdesk conversations, contacts and settings"), so an assistant granted only
 * `contacts:*` manages contacts, and one granted `helpdesk:*` works the whole helpdesk.
 */
export const HELPDESK_ROUTE_SCOPES: RouteScope[] = [
  ...catalogueRouteScopes('/v3/helpdesk/inboxes', HELPDESK_SCOPES),
  { method: 'GET', path: '/v3/helpdesk/inboxes/:id/members', scopes: ['helpdesk:read'] },
  // Reading what an inbox can send is reading the helpdesk, like its members (not connections:read).
  { method: 'GET', path: '/v3/helpdesk/inboxes/:id/templates', scopes: ['helpdesk:read'] },
  { method: 'PUT', path: '/v3/helpdesk/inboxes/:id/members', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/inboxes/:id/sync', scopes: ['helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/inboxes/:id/sync', scopes: ['helpdesk:write'] },

  { method: 'GET', path: '/v3/helpdesk/contacts', scopes: ['contacts:read', 'helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/contacts/:id', scopes: ['contacts:read', 'helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/contacts', scopes: ['contacts:write', 'helpdesk:write'] },
  { method: 'PATCH', path: '/v3/helpdesk/contacts/:id', scopes: ['contacts:write', 'helpdesk:write'] },
  { method: 'DELETE', path: '/v3/helpdesk/contacts/:id', scopes: ['contacts:write', 'helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/contacts/:id/merge', scopes: ['contacts:write', 'helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/contacts/import', scopes: ['contacts:write', 'helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/contacts/:id/notes', scopes: ['contacts:read', 'helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/contacts/:id/notes', scopes: ['contacts:write', 'helpdesk:write'] },
  { method: 'DELETE', path: '/v3/helpdesk/contacts/:id/notes/:noteId', scopes: ['contacts:write', 'helpdesk:write'] },

  { method: 'GET', path: '/v3/helpdesk/conversations', scopes: ['helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/conversations', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/conversations/counts', scopes: ['helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/conversations/:id', scopes: ['helpdesk:read'] },
  { method: 'PATCH', path: '/v3/helpdesk/conversations/:id', scopes: ['helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/status', scopes: ['helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/labels', scopes: ['helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/read', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/conversations/:id/messages', scopes: ['helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/messages', scopes: ['helpdesk:write'] },

  ...catalogueRouteScopes('/v3/helpdesk/teams', HELPDESK_SCOPES),
  { method: 'GET', path: '/v3/helpdesk/teams/:id/members', scopes: ['helpdesk:read'] },
  { method: 'PUT', path: '/v3/helpdesk/teams/:id/members', scopes: ['helpdesk:write'] },

  ...catalogueRouteScopes('/v3/helpdesk/labels', HELPDESK_SCOPES),
  { method: 'PATCH', path: '/v3/helpdesk/conversations/:id/messages/:messageId', scopes: ['helpdesk:write'] },
  { method: 'DELETE', path: '/v3/helpdesk/conversations/:id/messages/:messageId', scopes: ['helpdesk:write'] },
  { method: 'DELETE', path: '/v3/helpdesk/conversations/:id', scopes: ['helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/attachments', scopes: ['helpdesk:write'] },

  // Helpdesk webhooks are webhooks (spec 2.7 "webhooks:read — read webhooks and delivery history").
  ...catalogueRouteScopes('/v3/helpdesk/webhooks', { read: ['webhooks:read'], write: ['webhooks:write'] }),
  { method: 'GET', path: '/v3/helpdesk/webhooks/:id/deliveries', scopes: ['webhooks:read'] },
  { method: 'POST', path: '/v3/helpdesk/webhooks/:id/test', scopes: ['webhooks:write'] },
  { method: 'POST', path: '/v3/helpdesk/webhooks/:id/deliveries/:deliveryId/redeliver', scopes: ['webhooks:write'] },
];

/**
 * The shared inbox (spec 1.3–1.6, issue 6): inboxes, inbox members, contacts, conversations and
 * their messages; `messages.upsert` on an inbox's connection opens or continues a conversation.
 */
export const helpdeskPlugin: Plugin = {
  name: 'helpdesk',
  migrations: {
    '0001_helpdesk': helpdesk0001,
    '0002_conversations': helpdesk0002,
    '0003_helpdesk_webhooks': helpdesk0003,
    '0004_presence': helpdesk0004,
    '0005_api_channel': helpdesk0005,
    '0006_teams': helpdesk0006,
    '0007_labels_attachments': helpdesk0007,
    '0008_inbox_sync': helpdesk0008,
    '0009_agent_bot_assignee': helpdesk0009,
    ...Object.assign({}, ...AUTOMATION_FEATURES.map((f) => f.migrations ?? {})),
    '0016_inbox_queries': helpdesk0016,
    '0017_contact_notes': helpdesk0017,
    '0018_inbox_tallies': helpdesk0018,
    '0019_inbox_walks': helpdesk0019,
    '0020_contact_inboxes': helpdesk0020,
  },
  routes: (ctx) =>
    new Elysia({ name: 'plugins.helpdesk' })
      .use(inboxRoutes(ctx))
      .use(inboxTemplateRoutes(ctx))
      .use(contactRoutes(ctx))
      .use(contactNoteRoutes(ctx))
      .use(conversationRoutes(ctx))
      .use(apiChannelRoutes(ctx))
      .use(teamRoutes(ctx))
      .use(labelRoutes(ctx))
      .use(attachmentRoutes(ctx))
      .use(inboxSyncRoutes(ctx))
      .use(helpdeskWebhookRoutes(ctx))
      .use(AUTOMATION_FEATURES.reduce((app, f) => (f.routes ? app.use(f.routes(ctx)) : app), new Elysia({ name: 'plugins.helpdesk.automation' }))),
  routeScopes: [...HELPDESK_ROUTE_SCOPES, ...AUTOMATION_FEATURES.flatMap((f) => f.routeScopes ?? [])],
  subscribers: [...HELPDESK_SUBSCRIBERS, ...HELPDESK_EVENT_SUBSCRIBERS, ...AUTOMATION_FEATURES.flatMap((f) => f.subscribers ?? [])],
  realtime: helpdeskRealtime,
  gauges: helpdeskGauges,
  deliveryTargets: { [HELPDESK_TARGET]: helpdeskDeliveryTarget, [AGENT_BOT_TARGET]: agentBotDeliveryTarget },
  audienceSources: { helpdeskContacts: helpdeskContactsAudience },
  mcpTools: [...HELPDESK_MCP_TOOLS, ...AUTOMATION_FEATURES.flatMap((f) => f.mcpTools ?? [])],
  jobs: (ctx) => [...helpdeskJobs(ctx), ...apiChannelJobs(ctx), ...inboxSyncJobs(ctx), ...AUTOMATION_FEATURES.flatMap((f) => f.jobs?.(ctx) ?? [])],
};
