import { sql, type Kysely, type QueryCreator, type RawBuilder } from 'kysely';
import { anyOf } from '../any-of.ts';
import { compiledOnce } from '../compiled-once.ts';
import type { ConnectionEventRecord, EventPublisher } from '../../../core/connections/connection.ts';
import type { IdGen, Clock } from '../../../core/shared/ports.ts';
import type { Database } from '../schema.ts';

/**
 * The job queue of plugin events queued before they waited in `plugin_event_queue` (and of
 * events whose batch run failed): the worker runs the subscribers of one event per job.
 */
export const PLUGIN_EVENTS_QUEUE = 'plugins.events';

/**
 * The durable event log: written in the transaction of the change that caused the event, with
 * its place in the webhooks' fan-out queue and the plugins' event queue (the transactional outbox).
 * An event is logged where something reads it: a workspace's own events (no connection: the
 * helpdesk's, read by its reports) always; a connection's events where a webhook subscribes to
 * them or a plugin takes them. Most sends have no reader, and a row nobody reads would cost the
 * database a write, its index entries and, later, its vacuuming.
 */
export function eventPublisher(
  db: Kysely<Database>,
  deps: { ids: IdGen; clock: Clock; pluginEvents?: ReadonlySet<string>; pluginEventConnections?: PluginEventConnections; pluginEventTests?: PluginEventTests },
): EventPublisher {
  const routes = routesFor(deps.pluginEventConnections ?? NO_NAMED_CONNECTIONS);
  async function publishMany(records: readonly ConnectionEventRecord[]) {
    // connection.update is never dispatched (spec 6.1); every other event of a connection may
    // have webhook subscribers, and then waits for the delivery engine's fan-out. An event some
    // enabled plugin listens to waits for the plugins' subscribers (apps/plugin-events.ts), on
    // every connection or, when its subscribers say so, on the connections they name. Both
    // places are written in the events' own statement, so they commit with them (a crash loses
    // neither).
    const routed = new Map<Route, EventColumns>();
    for (const e of records) {
      const route = routes[routeOf(e, deps)];
      if (!route) continue;
      const [ids, workspaceIds, connectionIds, events, remoteJids, payloads, createdAts] = routed.get(route) ?? routed.set(route, [[], [], [], [], [], [], []]).get(route)!;
      ids.push(deps.ids.next());
      workspaceIds.push(e.workspaceId);
      connectionIds.push(e.connectionId || null);
      events.push(e.event);
      remoteJids.push(e.remoteJid);
      payloads.push(JSON.stringify({ event: e.event, connectionId: e.connectionId, remoteJid: e.remoteJid, sender: e.sender, data: e.data }));
      createdAts.push(deps.clock.now().toISOString());
    }
    // The rows go as an array parameter per column: each route's statement has one text, compiled once.
    for (const [route, columns] of routed) await route(db, ...columns);
  }

  return {
    publish: (event) => publishMany([event]),
    publishMany,
  };
}

/**
 * The connections a plugin's subscriber takes its events on, as a table of the plugin that names
 * them (one row per connection of a workspace: the helpdesk's inboxes). Looked up when the
 * event is written, by an index of the table (the inboxes' unique one on workspace and connection).
 */
export interface ConnectionTable {
  table: string;
  workspaceColumn: string;
  connectionColumn: string;
}

/**
 * The events every subscriber of which takes them only on some connections, with the tables that
 * name those connections: such an event waits for the plugins only where a row names its
 * connection when it is written, where most connections would queue rows nobody acts on.
 */
export type PluginEventConnections = ReadonlyMap<string, readonly ConnectionTable[]>;

/**
 * Of the events of `PluginEventConnections`, those some subscriber takes on any connection when a
 * test of the event's data passes (a stop word): such an event waits for the plugins wherever it
 * is written.
 */
export type PluginEventTests = ReadonlyMap<string, (data: unknown) => boolean>;

/**
 * Which of a publisher's routes (`routesFor`) an event takes: whether it has a connection and
 * may go to webhooks (a connection's events but connection.update), and which plugins take it.
 */
function routeOf(e: ConnectionEventRecord, readers: { pluginEvents?: ReadonlySet<string>; pluginEventConnections?: PluginEventConnections; pluginEventTests?: PluginEventTests }): number {
  const { pluginEvents, pluginEventConnections, pluginEventTests } = readers;
  const plugins = !pluginEvents?.has(e.event)
    ? NO_PLUGIN
    : !pluginEventConnections?.has(e.event) || pluginEventTests?.get(e.event)?.(e.data)
      ? EVERY_PLUGIN
      : NAMED_CONNECTIONS;
  // An event with no connection is on none its subscribers name.
  if (!e.connectionId) return plugins === EVERY_PLUGIN ? WORKSPACE_EVENT_TO_PLUGINS : WORKSPACE_EVENT;
  return (e.event === 'connection.update' ? NOT_TO_WEBHOOKS : TO_WEBHOOKS) + plugins;
}

/** Offsets into a publisher's routes: a connection's event to webhooks or not, plus to which plugins. */
const NOT_TO_WEBHOOKS = 0;
const TO_WEBHOOKS = 1;
const NO_PLUGIN = 0;
const EVERY_PLUGIN = 2;
const NAMED_CONNECTIONS = 4;
/** A workspace's own event (no connection), to no plugin or to every plugin. */
const WORKSPACE_EVENT = 6;
const WORKSPACE_EVENT_TO_PLUGINS = 7;

type EventRow = { id: string; workspace_id: string; connection_id: string | null; event: string; remote_jid: string | null; payload: unknown; created_at: Date };
type LoggedDb = Database & { logged: Pick<EventRow, 'id' | 'workspace_id' | 'connection_id' | 'event'> };
/** The events to log, a column each (`EVENT_COLUMNS` order): ids, workspaces, connections, events, chats, payloads (JSON text), times (ISO). */
type EventColumns = [string[], string[], Array<string | null>, string[], Array<string | null>, string[], string[]];
type Route = (db: Kysely<Database>, ...columns: EventColumns) => Promise<unknown>;

/**
 * The events of `EventColumns`, as a table. The payload travels as text and is cast in SQL (Bun's
 * client would encode a jsonb parameter again, as a JSON string); unnested arrays cost Postgres
 * less than one JSON document of rows taken apart with jsonb_to_recordset.
 */
function eventRows(columns: EventColumns) {
  const [ids, workspaceIds, connectionIds, events, remoteJids, payloads, createdAts] = columns;
  return sql<EventRow>`(select id, workspace_id, connection_id, event, remote_jid, payload::jsonb as payload, created_at from unnest(${ids}::uuid[], ${workspaceIds}::uuid[], ${connectionIds}::uuid[], ${events}::text[], ${remoteJids}::text[], ${payloads}::text[], ${createdAts}::timestamptz[]) as u(id, workspace_id, connection_id, event, remote_jid, payload, created_at))`.as('r');
}

const EVENT_COLUMNS = ['id', 'workspace_id', 'connection_id', 'event', 'remote_jid', 'payload', 'created_at'] as const;

/** Logs the events, or those `where` keeps (a test of the events as `r`). */
function logEvents(db: QueryCreator<Database>, columns: EventColumns, where?: RawBuilder<boolean>) {
  return db
    .insertInto('events')
    .columns([...EVENT_COLUMNS])
    .expression((eb) => {
      const rows = eb.selectFrom(eventRows(columns)).select(EVENT_COLUMNS.map((c) => `r.${c}` as const));
      return where ? rows.where(where) : rows;
    });
}

/** The events logged by the statement's `logged` step (those `where` keeps). */
function logged(db: QueryCreator<Database>, columns: EventColumns, where?: RawBuilder<boolean>) {
  return db.with('logged', (w) => logEvents(w, columns, where).returning(['id', 'workspace_id', 'connection_id', 'event']));
}

/**
 * One statement per routing. A workspace's own events: logged, and to every plugin or not. A
 * connection's events, not to webhooks: to no plugin (nothing written), to every plugin, to
 * plugins where a table names the connection. The same to webhooks as well, logged where a
 * webhook wants them too. The routes depend on the process's plugins: made once per
 * `PluginEventConnections`.
 */
function routesFor(connections: PluginEventConnections): ReadonlyArray<Route | undefined> {
  const known = routesByConnections.get(connections);
  if (known) return known;
  const named = namedConnections(connections, 'r');
  const namedLogged = namedConnections(connections, 'logged');
  const wanted = webhookWants('r');
  const wantedLogged = webhookWants('logged');
  const routes: Array<Route | undefined> = [];
  routes[NOT_TO_WEBHOOKS + NO_PLUGIN] = undefined;
  routes[NOT_TO_WEBHOOKS + EVERY_PLUGIN] = compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toPlugins(logged(db, columns)));
  routes[NOT_TO_WEBHOOKS + NAMED_CONNECTIONS] = compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toPlugins(logged(db, columns, named)));
  routes[TO_WEBHOOKS + NO_PLUGIN] = compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toFanout(logged(db, columns, wanted)));
  routes[TO_WEBHOOKS + EVERY_PLUGIN] = compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toPlugins(logged(db, columns).with('fanout', (w) => toFanout(w, wantedLogged))));
  routes[TO_WEBHOOKS + NAMED_CONNECTIONS] = compiledOnce((db: Kysely<Database>, ...columns: EventColumns) =>
    toPlugins(logged(db, columns, sql<boolean>`(${wanted} or ${named})`).with('fanout', (w) => toFanout(w, wantedLogged)), namedLogged),
  );
  routes[WORKSPACE_EVENT] = compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => logEvents(db, columns));
  routes[WORKSPACE_EVENT_TO_PLUGINS] = compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toPlugins(logged(db, columns)));
  routesByConnections.set(connections, routes);
  return routes;
}

const routesByConnections = new WeakMap<PluginEventConnections, ReadonlyArray<Route | undefined>>();
const NO_NAMED_CONNECTIONS: PluginEventConnections = new Map();

/** The logged events' places in the webhooks' fan-out queue: all of them, or those `where` keeps. */
function toFanout(db: QueryCreator<LoggedDb>, where?: RawBuilder<boolean>) {
  return db
    .insertInto('webhook_fanout')
    .columns(['event_id'])
    .expression((eb) => {
      const events = eb.selectFrom('logged').select('logged.id');
      return where ? events.where(where) : events;
    });
}

/** The logged events' places in the plugins' queue: all of them, or those `where` keeps. */
function toPlugins<DB extends LoggedDb>(db: QueryCreator<DB>, where?: RawBuilder<boolean>) {
  return (db as unknown as QueryCreator<LoggedDb>)
    .insertInto('plugin_event_queue')
    .columns(['event_id'])
    .expression((eb) => {
      const events = eb.selectFrom('logged').select('logged.id');
      return where ? events.where(where) : events;
    });
}

/**
 * Of the events as `alias`, those some webhook subscribes to (the test of `subscribes`,
 * core/webhooks/webhook.ts; the delivery engine still matches exactly). A webhook created or
 * changed while the statement runs is not seen: the event then commits concurrently with the
 * webhook, not after it. Every statement that starts after the webhook committed sees it, so
 * every event caused after its creation was answered waits for the fan-out.
 */
function webhookWants(alias: 'r' | 'logged'): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  return sql<boolean>`exists (select from ${sql.table('webhooks')} as w where w.workspace_id = ${column('workspace_id')} and ${column('connection_id')} = any(w.connections) and ${column('event')} = any(w.events))`;
}

/** Of the events as `alias`, those a table names the connection of (for that event): one `exists` per table. */
function namedConnections(connections: PluginEventConnections, alias: 'r' | 'logged'): RawBuilder<boolean> {
  const eventsByTable = new Map<string, { table: ConnectionTable; events: string[] }>();
  for (const [event, tables] of connections) {
    for (const table of tables) {
      const key = JSON.stringify([table.table, table.workspaceColumn, table.connectionColumn]);
      const entry = eventsByTable.get(key) ?? eventsByTable.set(key, { table, events: [] }).get(key)!;
      entry.events.push(event);
    }
  }
  const tests = [...eventsByTable.values()].map(
    ({ table, events }) =>
      sql<boolean>`(${sql.ref(`${alias}.event`)} = ${anyOf(events, 'text')} and exists (select from ${sql.table(table.table)} as named where ${sql.ref(`named.${table.workspaceColumn}`)} = ${sql.ref(`${alias}.workspace_id`)} and ${sql.ref(`named.${table.connectionColumn}`)} = ${sql.ref(`${alias}.connection_id`)}))`,
  );
  return tests.length > 0 ? sql<boolean>`(${sql.join(tests, sql` or `)})` : sql<boolean>`false`;
}

/** Events by id, oldest first: what the plugins' event runner reads of each batch it takes. */
export const eventsById = compiledOnce((db: Kysely<Database>, ids: readonly string[]) =>
  db.selectFrom('events').selectAll().where('id', '=', anyOf(ids, 'uuid')).orderBy('created_at').orderBy('id'),
);
