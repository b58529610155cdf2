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
    const routed = new Map<Route, EventRow[]>();
    for (const e of records) {
      const toPlugins = !deps.pluginEvents?.has(e.event) ? NO_PLUGIN : !deps.pluginEventConnections?.has(e.event) ? EVERY_PLUGIN : e.connectionId ? NAMED_CONNECTIONS : NO_PLUGIN;
      const route = routes[(e.connectionId && e.event !== 'connection.update' ? 1 : 0) + toPlugins]!;
      const rows = routed.get(route) ?? routed.set(route, []).get(route)!;
      rows.push({
        id: deps.ids.next(),
        workspace_id: e.workspaceId,
        connection_id: e.connectionId || null,
        event: e.event,
        remote_jid: e.remoteJid,
        payload: { event: e.event, connectionId: e.connectionId, remoteJid: e.remoteJid, sender: e.sender, data: e.data },
        created_at: deps.clock.now(),
      });
    }
    // The rows go as one JSON parameter: each route's statement has one text, compiled once.
    for (const [route, rows] of routed) await route(db, JSON.stringify(rows));
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
type Route = (db: Kysely<Database>, rows: string) => Promise<unknown>;

/** The events of a JSON array of rows (`EventRow`), as a table; the JSON goes as text (Bun's client would encode a jsonb parameter again, as a JSON string). */
function eventRows(rows: string) {
  return sql<EventRow>`(select * from jsonb_to_recordset(${rows}::text::jsonb) as r(id uuid, workspace_id uuid, connection_id uuid, event text, remote_jid text, payload jsonb, created_at timestamptz))`.as('r');
}

const EVENT_COLUMNS = ['id', 'workspace_id', 'connection_id', 'event', 'remote_jid', 'payload', 'created_at'] as const;

function logEvents(db: QueryCreator<Database>, rows: string) {
  return db.insertInto('events').columns([...EVENT_COLUMNS]).expression((eb) => eb.selectFrom(eventRows(rows)).select(EVENT_COLUMNS.map((c) => `r.${c}` as const)));
}

/** The events logged by the statement's `logged` step. */
function logged(db: QueryCreator<Database>, rows: string) {
  return db.with('logged', (w) => logEvents(w, rows).returning(['id', 'workspace_id', 'connection_id', 'event']));
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
    compiledOnce((db: Kysely<Database>, rows: string) => logEvents(db, rows)),
    compiledOnce((db: Kysely<Database>, rows: string) => toFanout(logged(db, rows))),
    compiledOnce((db: Kysely<Database>, rows: string) => toPlugins(logged(db, rows))),
    compiledOnce((db: Kysely<Database>, rows: string) => toPlugins(logged(db, rows).with('fanout', toFanout))),
    compiledOnce((db: Kysely<Database>, rows: string) => toPlugins(logged(db, rows), named)),
    compiledOnce((db: Kysely<Database>, rows: string) => toPlugins(logged(db, rows).with('fanout', toFanout), named)),
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
