import type { Elysia } from 'elysia';
import type { RouteScope } from '../kernel/http.ts';
import type { Migration } from '../kernel/storage.ts';
import type { JobDefinition } from '../kernel/jobs.ts';
import type { EventSubscriber, McpToolDefinition, PluginContext } from '../kernel/plugin.ts';

/**
 * One feature of the helpdesk plugin (assignment, SLAs, CSAT…) with everything it brings; the
 * plugin object (index.ts) is the sum of its features. Automation reacts to helpdesk events
 * (`subscribers` on `helpdesk.*` types, run by the worker after the change committed).
 */
export interface HelpdeskFeature {
  migrations?: Record<string, Migration>;
  routes?: (ctx: PluginContext) => Elysia<any, any, any, any, any, any, any>;
  routeScopes?: RouteScope[];
  jobs?: (ctx: PluginContext) => JobDefinition[];
  subscribers?: EventSubscriber[];
  mcpTools?: McpToolDefinition[];
}
