import type { Elysia } from 'elysia';
import type { AppContext } from '../adapters/http/context.ts';
import type { Migration } from '../adapters/postgres/migrator.ts';
import type { JobDefinition } from '../adapters/queue/queue.ts';

export type PluginContext = AppContext;

/** A domain event and what a plugin does when it happens (run by the worker). */
export interface EventSubscriber {
  event: string;
  handle(payload: unknown, ctx: PluginContext): Promise<void>;
}

/** A tool the MCP endpoint offers when the plugin is on. */
export interface McpToolDefinition {
  name: string;
  description: string;
  scopes: string[];
  inputSchema: object;
  run(input: unknown, ctx: PluginContext): Promise<unknown>;
}

/** The contract of ARCHITECTURE.md: one folder under `plugins/` exports one of these. */
export interface Plugin {
  name: string;
  dependsOn?: string[];
  /** Kysely migrations; frozen in time, they take `Kysely<any>`. */
  migrations?: Record<string, Migration>;
  routes?: (ctx: PluginContext) => Elysia<any, any, any, any, any, any, any>;
  jobs?: JobDefinition[] | ((ctx: PluginContext) => JobDefinition[]);
  subscribers?: EventSubscriber[];
  realtime?: (io: unknown, ctx: PluginContext) => void;
  mcpTools?: McpToolDefinition[];
}

