import { Elysia } from 'elysia';
import type { HelpdeskFeature } from '../feature.ts';
import * as helpdesk0011bots from '../migrations/0011_agent_bots.ts';
import * as helpdesk0011ai from '../migrations/0011_ai_settings.ts';
import { aiRoutes } from '../ai/routes.ts';
import { agentBotApiRoutes } from './bot-api.ts';
import { agentBotRoutes } from './routes.ts';
import { AGENT_BOT_SUBSCRIBERS } from './subscriber.ts';

/**
 * Issue 7 item 4: agent bots (take new conversations of their inboxes first, hear their events on
 * their own webhook, answer and hand over through the bot API) and the workspace's AI settings
 * with the AI actions on conversations. Its subscribers must come before the assignment
 * feature's (plugins/helpdesk/automation.ts), so a bot has its turn before round-robin.
 * Bot API routes (`/v3/helpdesk/agent-bot/…`) take the bot's own token, never an OAuth token:
 * they have no scope row (closed to OAuth clients by having no apikey/bearer authentication).
 */
export const agentBotsFeature: HelpdeskFeature = {
  migrations: { '0011_agent_bots': helpdesk0011bots, '0011_ai_settings': helpdesk0011ai },
  routes: (ctx) => new Elysia({ name: 'plugins.helpdesk.bots-and-ai' }).use(agentBotRoutes(ctx)).use(agentBotApiRoutes(ctx)).use(aiRoutes(ctx)),
  routeScopes: [
    { method: 'GET', path: '/v3/helpdesk/agent-bots', scopes: ['helpdesk:read'] },
    { method: 'GET', path: '/v3/helpdesk/agent-bots/:id', scopes: ['helpdesk:read'] },
    { method: 'GET', path: '/v3/helpdesk/agent-bots/:id/deliveries', scopes: ['helpdesk:read'] },
    { method: 'POST', path: '/v3/helpdesk/agent-bots', scopes: ['helpdesk:write'] },
    { method: 'PATCH', path: '/v3/helpdesk/agent-bots/:id', scopes: ['helpdesk:write'] },
    { method: 'DELETE', path: '/v3/helpdesk/agent-bots/:id', scopes: ['helpdesk:write'] },
    { method: 'POST', path: '/v3/helpdesk/agent-bots/:id/token/rotate', scopes: ['helpdesk:write'] },
    { method: 'POST', path: '/v3/helpdesk/agent-bots/:id/signing-secret/rotate', scopes: ['helpdesk:write'] },
    { method: 'POST', path: '/v3/helpdesk/agent-bots/:id/deliveries/:deliveryId/redeliver', scopes: ['helpdesk:write'] },
    { method: 'GET', path: '/v3/helpdesk/ai-settings', scopes: ['helpdesk:read'] },
    { method: 'PUT', path: '/v3/helpdesk/ai-settings', scopes: ['helpdesk:write'] },
    { method: 'POST', path: '/v3/helpdesk/conversations/:id/ai/suggest-reply', scopes: ['helpdesk:write'] },
    { method: 'POST', path: '/v3/helpdesk/conversations/:id/ai/summarize', scopes: ['helpdesk:write'] },
  ],
  subscribers: AGENT_BOT_SUBSCRIBERS,
};
