import type { Plugin } from '../kernel/plugin.ts';
import type { RouteScope } from '../kernel/http.ts';
import { CAMPAIGN_TARGET } from '../../core/campaigns/campaign-webhook.ts';
import * as campaigns0001 from './migrations/0001_campaigns.ts';
import { campaignRoutes } from './routes.ts';
import { campaignJobs } from './jobs.ts';
import { CAMPAIGN_SUBSCRIBERS } from './subscribers.ts';
import { CAMPAIGN_MCP_TOOLS } from './mcp-tools.ts';
import { campaignDeliveryTarget } from './use-case-stores.ts';
import { campaignGauges } from './metrics.ts';

/**
 * OAuth scopes of the campaign routes: sending a campaign is sending messages (`messages:send`
 * also reads campaigns: their progress is the sender's own work, no message content); the
 * webhook's delivery history is a webhook's (`webhooks:read`).
 */
export const CAMPAIGN_ROUTE_SCOPES: RouteScope[] = [
  { method: 'POST', path: '/v3/campaigns', scopes: ['messages:send'] },
  { method: 'GET', path: '/v3/campaigns', scopes: ['messages:send'] },
  { method: 'GET', path: '/v3/campaigns/:id', scopes: ['messages:send'] },
  { method: 'GET', path: '/v3/campaigns/:id/recipients', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/campaigns/:id/launch', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/campaigns/:id/pause', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/campaigns/:id/resume', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/campaigns/:id/cancel', scopes: ['messages:send'] },
  { method: 'DELETE', path: '/v3/campaigns/:id', scopes: ['messages:send'] },
  { method: 'GET', path: '/v3/campaigns/:id/deliveries', scopes: ['webhooks:read'] },
  { method: 'GET', path: '/v3/campaigns/opt-outs', scopes: ['messages:send'] },
  { method: 'POST', path: '/v3/campaigns/opt-outs', scopes: ['messages:send'] },
  { method: 'DELETE', path: '/v3/campaigns/opt-outs/:phone', scopes: ['messages:send'] },
];

/**
 * Campaigns (issue 8; spec 1.3, 5.4, 8): one message to many recipients on a connection, paced,
 * with the audience's credits reserved up front and exactly-once sending per recipient.
 */
export const campaignsPlugin: Plugin = {
  name: 'campaigns',
  migrations: { '0001_campaigns': campaigns0001 },
  routes: campaignRoutes,
  routeScopes: CAMPAIGN_ROUTE_SCOPES,
  jobs: campaignJobs,
  subscribers: CAMPAIGN_SUBSCRIBERS,
  deliveryTargets: { [CAMPAIGN_TARGET]: campaignDeliveryTarget },
  mcpTools: CAMPAIGN_MCP_TOOLS,
  gauges: campaignGauges,
};
