/**
 * The plugin kernel's contract: what a plugin declares (name, dependencies, migrations, routes,
 * scopes, jobs, subscribers, MCP tools, realtime) and the context it receives. Adapters reach
 * plugins only through plugins/kernel/, apps/ through it and the catalogue plugins/index.ts
 * (see .dependency-cruiser.cjs).
 */
import type { Elysia } from 'elysia';
import type { PluginContext } from './context.ts';
import type { Migration } from '../../adapters/postgres/migrator.ts';
import type { JobDefinition } from '../../adapters/queue/queue.ts';
import type { RouteScope } from '../../adapters/http/route-scopes.ts';
import type { McpToolDefinition } from '../../adapters/mcp/tool.ts';
import type { AccessChange, RealtimeServer } from '../../adapters/realtime/hub.ts';
import type { DeliveryTargetFinder } from '../../adapters/webhooks/endpoints.ts';
import type { AudienceSource } from './context.ts';
import type { TemplateComponentRule } from '../../core/templates/component-rules.ts';
import type { GaugeDefinition } from '../../adapters/metrics/metrics.ts';
import type { ConnectionTable } from '../../adapters/postgres/repositories/event-store.ts';

export type { PluginContext } from './context.ts';
export type { GaugeDefinition, GaugeSample } from '../../adapters/metrics/metrics.ts';
export type { ConnectionTable } from '../../adapters/postgres/repositories/event-store.ts';

/** A domain event and what a plugin does when it happens (run by the worker). */
export interface EventSubscriber {
  event: string;
  handle(payload: unknown, ctx: PluginContext): Promise<void>;
  /**
   * Optional, for a subscriber that acts on few of its events: given a claimed batch of them,
   * answers the ids of those `handle` must see (one read for the batch instead of one per event).
   * It must leave out only events whose handling would do nothing, whatever the batch's other
   * events do. Asked before any of the batch runs; when it throws, every event is handled.
   */
  select?(payloads: unknown[], ctx: PluginContext): Promise<ReadonlySet<string>>;
  /**
   * Optional, for a subscriber that acts on its events only on some connections: a table of the
   * plugin naming them (the helpdesk's inboxes). When every subscriber of an event names one, the
   * event waits for the plugins only on a connection such a row names as the event is written;
   * elsewhere no queue row is written for it at all. A connection named later gets the events
   * written after the row is committed.
   */
  onlyOnConnectionsIn?: ConnectionTable;
  /**
   * Optional, with `onlyOnConnectionsIn`: a test of an event's data (`data` of the payload) for
   * the events the subscriber takes on every connection all the same (a stop word counts
   * wherever it is written). Run in the process that writes the event, before it is written:
   * quick, pure, and true for every event `handle` must see off the named connections.
   */
  alsoWhen?(data: unknown): boolean;
}

/**
 * A tool the MCP endpoint offers when the plugin is on: name, description, the OAuth scopes that
 * cover it, a TypeBox input schema (JSON Schema) and `run(input, { actor, ctx })`. Base tools use the same type
 * (`adapters/mcp/tool.ts`; `defineTool` infers the input's types).
 */
export type { McpToolDefinition } from '../../adapters/mcp/tool.ts';

/** What a server process tells the plugins' sockets besides their own events. */
export interface RealtimeSignals {
  /**
   * Someone's access changed, anywhere in the cluster (`ctx.realtime.accessChanged`): re-check
   * the sockets it concerns now (disconnect a failed credential, move rooms otherwise).
   */
  onAccessChanged(listener: (change: AccessChange) => void): void;
}

/** The contract of ARCHITECTURE.md: one folder under `plugins/` exports one of these. */
export interface Plugin {
  name: string;
  dependsOn?: string[];
  /** Kysely migrations; frozen in time, they take `Kysely<any>`. */
  migrations?: Record<string, Migration>;
  routes?: (ctx: PluginContext) => Elysia<any, any, any, any, any, any, any>;
  /** The OAuth scope of each authenticated route the plugin adds (see adapters/http/route-scopes.ts). */
  routeScopes?: RouteScope[];
  jobs?: JobDefinition[] | ((ctx: PluginContext) => JobDefinition[]);
  subscribers?: EventSubscriber[];
  /** The plugin's kinds of webhook, delivered by the base's delivery engine (retries, history). */
  deliveryTargets?: Record<string, DeliveryTargetFinder>;
  /** Template component types the plugin teaches the base (`CAROUSEL`), by upper-case type. */
  templateComponents?: Record<string, TemplateComponentRule>;
  /** Audiences the plugin offers to campaigns, by the field name of `audience` they answer. */
  audienceSources?: Record<string, AudienceSource>;
  /**
   * Adds the plugin's Socket.IO namespaces to a server process's realtime server (spec 6.7).
   * May return what undoes it (timers, say), run when the server stops.
   */
  realtime?: (io: RealtimeServer, ctx: PluginContext, signals: RealtimeSignals) => void | (() => void | Promise<void>);
  mcpTools?: McpToolDefinition[];
  /** Gauges of the plugin's own state, read at each scrape of `/metrics` (cheap, indexed reads). */
  gauges?: (ctx: PluginContext) => GaugeDefinition[];
  /**
   * The path of the plugin's page where a person lands after signing in or setting up (the
   * console's `/`). The first loaded plugin that names one wins; without any it is `/account`.
   */
  homePage?: string;
}

