import { afterAll, beforeAll, expect, test } from 'bun:test';
import { eventPublisher, type PluginEventConnections, type PluginEventTests } from '../../adapters/postgres/repositories/event-store.ts';
import { uuidV7 } from '../../adapters/system.ts';
import type { ConnectionEventRecord } from '../../core/connections/connection.ts';
import { openTestContext, type TestContext } from '../support/context.ts';
import { watchedByWebhook } from '../support/connections.ts';

/**
 * The events' outbox (adapters/postgres/repositories/event-store.ts): an event is logged, with its
 * data as given, where something reads it. A workspace's own event (no connection) always; a
 * connection's event when some webhook of its workspace subscribes to it on its connection (it
 * then waits for the fan-out) or a plugin listens (it then waits for the plugins' subscribers).
 */

let t: TestContext;
let workspaceId: string;
let connectionId: string;
let otherConnectionId: string;

beforeAll(async () => {
  t = await openTestContext();
  workspaceId = uuidV7.next();
  connectionId = uuidV7.next();
  otherConnectionId = uuidV7.next();
  await t.ctx.db.insertInto('workspaces').values({ id: workspaceId, name: 'Outbox', is_personal: false, plan: 'PRO', created_at: new Date() } as any).execute();
  for (const id of [connectionId, otherConnectionId]) {
    await t.ctx.db.insertInto('connections').values({ id, workspace_id: workspaceId, name: 'Phone', kind: 'sandbox', status: 'CONNECTED', phone_number: null, qr: null, pairing_code: null, status_reason: null, routing_key: null }).execute();
  }
}, 60_000);

afterAll(async () => {
  await t?.close();
}, 60_000);

const record = (event: string, connection: string, remoteJid: string | null, data: unknown): ConnectionEventRecord => ({ workspaceId, connectionId: connection, event, remoteJid, sender: '5511999990000', data });

async function publishMany(records: ConnectionEventRecord[], pluginEvents: string[] = [], pluginEventConnections?: PluginEventConnections, pluginEventTests?: PluginEventTests): Promise<void> {
  await t.ctx.db.transaction().execute((trx) => eventPublisher(trx, { ids: uuidV7, clock: t.ctx.clock, pluginEvents: new Set(pluginEvents), pluginEventConnections, pluginEventTests }).publishMany(records));
}

/** The tags of the workspace's logged events, in the order they were logged. */
async function loggedTags(): Promise<string[]> {
  const rows = await t.ctx.db.selectFrom('events').select('payload').where('workspace_id', '=', workspaceId).orderBy('id').execute();
  return rows.map((r) => ((typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as { data: { tag: string } }).data.tag);
}

async function waitingFor(table: 'webhook_fanout' | 'plugin_event_queue'): Promise<Set<string>> {
  const rows = await t.ctx.db.selectFrom(table).innerJoin('events', 'events.id', `${table}.event_id`).select('events.payload').execute();
  return new Set(rows.map((r) => ((typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as { data: { tag: string } }).data.tag));
}

test('events are logged as given where something reads them; those some webhook subscribes to wait for the fan-out, whatever a plugin takes waits for the plugins', async () => {
  const tricky = { tag: 'tricky', text: 'quote " backslash \\ newline \n unicode ✓ {"a":[1,2]}', nested: { list: [1, null, true], at: '2026-01-01T00:00:00.000Z' } };
  await publishMany(
    [
      record('messages.upsert', connectionId, '1@s.whatsapp.net', { tag: 'unread' }),
      record('messages.update', connectionId, null, { tag: 'before-update' }),
      record('probe.happened', connectionId, null, { tag: 'before-probe' }),
      record('connection.update', connectionId, null, { tag: 'status-unread' }),
      record('report.happened', '', null, { tag: 'workspace-own' }),
    ],
    ['probe.happened'],
  );
  // No webhook yet: nothing reads the messages, the update or the status; the plugin's event waits for the plugins, the workspace's own event is kept.
  expect(await loggedTags()).toEqual(['before-probe', 'workspace-own']);
  expect(await waitingFor('webhook_fanout')).toEqual(new Set());
  expect(await waitingFor('plugin_event_queue')).toEqual(new Set(['before-probe']));

  await watchedByWebhook(t.ctx.db, workspaceId, [connectionId], ['messages.upsert', 'probe.happened', 'connection.update']);
  await publishMany(
    [
      record('messages.upsert', connectionId, '1@s.whatsapp.net', tricky),
      record('messages.update', connectionId, '1@s.whatsapp.net', { tag: 'other-event' }),
      record('messages.upsert', otherConnectionId, '1@s.whatsapp.net', { tag: 'other-connection' }),
      record('connection.update', connectionId, null, { tag: 'never-dispatched' }),
      record('connection.update', otherConnectionId, null, { tag: 'status-to-plugins' }),
      record('probe.happened', connectionId, null, { tag: 'both' }),
    ],
    ['probe.happened', 'connection.update'],
  );
  expect(await waitingFor('webhook_fanout')).toEqual(new Set(['tricky', 'both']));
  expect(await waitingFor('plugin_event_queue')).toEqual(new Set(['before-probe', 'never-dispatched', 'status-to-plugins', 'both']));
  expect(await loggedTags()).toEqual(['before-probe', 'workspace-own', 'tricky', 'never-dispatched', 'status-to-plugins', 'both']);
  const first = (await t.ctx.db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).where('event', '=', 'messages.upsert').execute())[0]!;
  expect(first.connection_id).toBe(connectionId);
  expect(first.remote_jid).toBe('1@s.whatsapp.net');
  expect(typeof first.payload === 'string' ? JSON.parse(first.payload) : first.payload).toEqual({ event: 'messages.upsert', connectionId, remoteJid: '1@s.whatsapp.net', sender: '5511999990000', data: tricky });
  expect(first.created_at).toBeInstanceOf(Date);
}, 60_000);

test('an event its plugins take only on some connections waits for them only where a row of their table names its connection when it is written', async () => {
  // A plugin's table of the connections it acts on (the helpdesk's inboxes, say), and another's.
  for (const table of ['outbox_inboxes', 'outbox_desks']) {
    await t.ctx.db.schema.createTable(table).addColumn('workspace_id', 'uuid', (c) => c.notNull()).addColumn('phone', 'uuid', (c) => c.notNull()).addPrimaryKeyConstraint(`${table}_key`, ['workspace_id', 'phone']).execute();
  }
  const inboxes = { table: 'outbox_inboxes', workspaceColumn: 'workspace_id', connectionColumn: 'phone' };
  const desks = { table: 'outbox_desks', workspaceColumn: 'workspace_id', connectionColumn: 'phone' };
  const routing: PluginEventConnections = new Map([
    ['scoped.happened', [inboxes]],
    ['both.happened', [inboxes, desks]],
  ]);
  const events = ['scoped.happened', 'both.happened', 'anywhere.happened'];
  await t.ctx.db.deleteFrom('plugin_event_queue').execute();
  const round = (tag: string) => [
    record('scoped.happened', connectionId, null, { tag: `${tag}-scoped` }),
    record('scoped.happened', otherConnectionId, null, { tag: `${tag}-scoped-other` }),
    record('both.happened', otherConnectionId, null, { tag: `${tag}-both-other` }),
    record('anywhere.happened', otherConnectionId, null, { tag: `${tag}-anywhere` }),
    { ...record('scoped.happened', '', null, { tag: `${tag}-no-connection` }) },
  ];

  // No row names a connection: only the event some plugin takes anywhere waits.
  await publishMany(round('none'), events, routing);
  expect(await waitingFor('plugin_event_queue')).toEqual(new Set(['none-anywhere']));

  // The first connection is named in one table, the other in the second table only.
  await t.ctx.db.insertInto('outbox_inboxes' as any).values({ workspace_id: workspaceId, phone: connectionId }).execute();
  await t.ctx.db.insertInto('outbox_desks' as any).values({ workspace_id: workspaceId, phone: otherConnectionId }).execute();
  // A row of another workspace naming the connection does not count.
  await t.ctx.db.insertInto('outbox_inboxes' as any).values({ workspace_id: uuidV7.next(), phone: otherConnectionId }).execute();
  await publishMany(round('named'), events, routing);
  expect(await waitingFor('plugin_event_queue')).toEqual(new Set(['none-anywhere', 'named-scoped', 'named-both-other', 'named-anywhere']));

  // With a webhook subscribed as well, the same events wait for the plugins (the fan-out's own route).
  await watchedByWebhook(t.ctx.db, workspaceId, [connectionId, otherConnectionId], ['scoped.happened']);
  await t.ctx.db.deleteFrom('plugin_event_queue').execute();
  await publishMany(round('hooked'), events, routing);
  expect(await waitingFor('plugin_event_queue')).toEqual(new Set(['hooked-scoped', 'hooked-both-other', 'hooked-anywhere']));
  expect(new Set([...(await waitingFor('webhook_fanout'))].filter((tag) => tag.startsWith('hooked')))).toEqual(new Set(['hooked-scoped', 'hooked-scoped-other']));
}, 60_000);

test('an event its plugins take only on some connections still waits for them anywhere when their test of its data passes', async () => {
  const desks = { table: 'outbox_desks', workspaceColumn: 'workspace_id', connectionColumn: 'phone' };
  const routing: PluginEventConnections = new Map([['reply.happened', [desks]]]);
  const urgent: PluginEventTests = new Map([['reply.happened', (data) => (data as { tag: string }).tag.endsWith('urgent')]]);
  await t.ctx.db.deleteFrom('plugin_event_queue').execute();
  // outbox_desks names otherConnectionId only (the test above).
  await publishMany(
    [
      record('reply.happened', connectionId, null, { tag: 'unnamed-plain' }),
      record('reply.happened', connectionId, null, { tag: 'unnamed-urgent' }),
      record('reply.happened', otherConnectionId, null, { tag: 'named-plain' }),
      { ...record('reply.happened', '', null, { tag: 'workspace-urgent' }) },
    ],
    ['reply.happened'],
    routing,
    urgent,
  );
  expect(await waitingFor('plugin_event_queue')).toEqual(new Set(['unnamed-urgent', 'named-plain', 'workspace-urgent']));
  const plain = await t.ctx.db.selectFrom('events').select('id').where('workspace_id', '=', workspaceId).where('event', '=', 'reply.happened').execute();
  expect(plain).toHaveLength(3);
}, 60_000);
