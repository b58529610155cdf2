import { expect, test } from 'bun:test';
import { pluginEventConnections, pluginEvents } from '../../apps/plugin-events.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import { AVAILABLE_PLUGINS } from '../../plugins/index.ts';

/**
 * Which events wait for the plugins only on named connections (plugins/kernel/plugin.ts,
 * `onlyOnConnectionsIn`): those every subscriber of which names its connections; one subscriber
 * taking the event anywhere makes it wait everywhere.
 */

const inboxes = { table: 'inboxes', workspaceColumn: 'workspace_id', connectionColumn: 'connection_id' };
const desks = { table: 'desks', workspaceColumn: 'workspace_id', connectionColumn: 'phone_id' };
const handle = async () => {};

test('an event is taken on named connections only when every subscriber of it names them', () => {
  const plugins: Plugin[] = [
    { name: 'desk', subscribers: [{ event: 'a', handle, onlyOnConnectionsIn: inboxes }, { event: 'b', handle, onlyOnConnectionsIn: inboxes }, { event: 'c', handle, onlyOnConnectionsIn: inboxes }] },
    { name: 'other', subscribers: [{ event: 'b', handle }, { event: 'c', handle, onlyOnConnectionsIn: desks }, { event: 'd', handle }] },
  ];
  expect(pluginEvents(plugins)).toEqual(new Set(['a', 'b', 'c', 'd']));
  expect(pluginEventConnections(plugins)).toEqual(
    new Map([
      ['a', [inboxes]],
      ['c', [inboxes, desks]],
    ]),
  );
});

test('with the shipped plugins, message deliveries wait only on inbox connections, incoming messages everywhere (campaign replies)', () => {
  const named = pluginEventConnections(AVAILABLE_PLUGINS);
  expect(named.get('send.message')?.map((t) => t.table)).toEqual(['helpdesk_inboxes']);
  expect(named.get('messages.update')?.map((t) => t.table)).toEqual(['helpdesk_inboxes']);
  expect(named.has('messages.upsert')).toBe(false);
  expect(pluginEvents(AVAILABLE_PLUGINS).has('messages.upsert')).toBe(true);
});
