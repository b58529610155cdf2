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
 */
export function eventPublisher(
  db: Kysely<Database>,
  deps: { ids: IdGen; clock: Clock; pluginEvents?: ReadonlySet<string>; pluginEventConnections?: PluginEventConnections },
): EventPublisher {
  const routes = routesFor(deps.pluginEventConnections ?? NO_NAMED_CONNECTIONS);
  async function publishMany(records: readonly ConnectionEventRecord[]) {
    // connection.update is never dispatched (spec 6.1); every other event may have webhook
    // subscribers: it waits for the delivery engine's fan-out. An event some enabled plugin
    // listens to waits for the plugins' subscribers (apps/plugin-events.ts), on every connection
    // or, when its subscribers say so, on the connections they name. Both places are written in
    // the events' own statement, so they commit with them (a crash loses neither).
    const routed = new Map<Route, EventColumns>();
    for (const e of records) {
      const toPlugins = !deps.pluginEvents?.has(e.event) ? NO_PLUGIN : !deps.pluginEventConnections?.has(e.event) ? EVERY_PLUGIN : e.connectionId ? NAMED_CONNECTIONS : NO_PLUGIN;
      const route = routes[(e.connectionId && e.event !== 'connection.update' ? 1 : 0) + toPlugins]!;
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
 * event is written, by the table's unique index on (workspace, connection).
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

/** Offsets into a publisher's routes (`routesFor`): to no plugin, to every plugin, to plugins when a table names the connection. */
const NO_PLUGIN = 0;
const EVERY_PLUGIN = 2;
const NAMED_CONNECTIONS = 4;

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

function logEvents(db: QueryCreator<Database>, columns: EventColumns) {
  return db.insertInto('events').columns([...EVENT_COLUMNS]).expression((eb) => eb.selectFrom(eventRows(columns)).select(EVENT_COLUMNS.map((c) => `r.${c}` as const)));
}

/** The events logged by the statement's `logged` step. */
function logged(db: QueryCreator<Database>, columns: EventColumns) {
  return db.with('logged', (w) => logEvents(w, columns).returning(['id', 'workspace_id', 'connection_id', 'event']));
}

/**
 * Only an event some webhook subscribes to waits for the fan-out (the test of `subscribes`,
 * core/webhooks/webhook.ts; the delivery engine still matches exactly): in most workspaces none
 * does, and a row nobody reads would be written and deleted for nothing. A webhook created or
 * changed while this statement runs is not seen: the event then commits concurrently with the
 * webhook, not after it. Every statement that starts after the webhook committed sees it, so
 * every event caused after its creation was answered waits for the fan-out.
 */
function toFanout(db: QueryCreator<LoggedDb>) {
  return db
    .insertInto('webhook_fanout')
    .columns(['event_id'])
    .expression((eb) =>
      eb
        .selectFrom('logged')
        .select('logged.id')
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('webhooks')
              .select('webhooks.id')
              .whereRef('webhooks.workspace_id', '=', 'logged.workspace_id')
              .where((e) => e(e.ref('logged.connection_id'), '=', e.fn.any('webhooks.connections')))
              .where((e) => e(e.ref('logged.event'), '=', e.fn.any('webhooks.events'))),
          ),
        ),
    );
}

/**
 * One statement per routing: nowhere else, to webhooks; to every plugin, and to webhooks as
 * well; to plugins where a table names the connection, and to webhooks as well (by that index).
 * The last two depend on the process's plugins: made once per `PluginEventConnections`.
 */
function routesFor(connections: PluginEventConnections): readonly Route[] {
  const known = routesByConnections.get(connections);
  if (known) return known;
  const named = namedConnections(connections);
  const routes: Route[] = [
    compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => logEvents(db, columns)),
    compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toFanout(logged(db, columns))),
    compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toPlugins(logged(db, columns))),
    compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toPlugins(logged(db, columns).with('fanout', toFanout))),
    compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toPlugins(logged(db, columns), named)),
    compiledOnce((db: Kysely<Database>, ...columns: EventColumns) => toPlugins(logged(db, columns).with('fanout', toFanout), named)),
  ];
  routesByConnections.set(connections, routes);
  return routes;
}

const routesByConnections = new WeakMap<PluginEventConnections, readonly Route[]>();
const NO_NAMED_CONNECTIONS: PluginEventConnections = new Map();

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

/** Of `logged`, the events a table names the connection of (for that event): one `exists` per table. */
function namedConnections(connections: PluginEventConnections): RawBuilder<boolean> {
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
      sql<boolean>`(${sql.ref('logged.event')} = ${anyOf(events, 'text')} and exists (select from ${sql.table(table.table)} as named where ${sql.ref(`named.${table.workspaceColumn}`)} = ${sql.ref('logged.workspace_id')} and ${sql.ref(`named.${table.connectionColumn}`)} = ${sql.ref('logged.connection_id')}))`,
  );
  return tests.length > 0 ? sql<boolean>`(${sql.join(tests, sql` or `)})` : sql<boolean>`false`;
}

/** Events by id, oldest first: what the webhook fan-out and the plugins' event runner read of each batch they take. */
export const eventsById = compiledOnce((db: Kysely<Database>, ids: readonly string[]) =>
  db.selectFrom('events').selectAll().where('id', '=', anyOf(ids, 'uuid')).orderBy('created_at').orderBy('id'),
);
