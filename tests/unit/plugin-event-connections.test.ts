import { expect, test } from 'bun:test';
import { pluginEventConnections, pluginEvents, pluginEventTests } from '../../apps/plugin-events.ts';
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

test('a test of the data is kept for a named event only, and passes when any of its subscribers\' tests passes', () => {
  const plugins: Plugin[] = [
    { name: 'desk', subscribers: [{ event: 'a', handle, onlyOnConnectionsIn: inboxes, alsoWhen: (data) => (data as { n: number }).n === 1 }, { event: 'b', handle, onlyOnConnectionsIn: inboxes, alsoWhen: () => true }] },
    { name: 'other', subscribers: [{ event: 'a', handle, onlyOnConnectionsIn: desks, alsoWhen: (data) => (data as { n: number }).n === 2 }, { event: 'b', handle }] },
    {
      name: 'careless',
      subscribers: [
        {
          event: 'a',
          handle,
          onlyOnConnectionsIn: desks,
          alsoWhen: (data) => {
            if ((data as { n: number }).n === 4) throw new Error('unexpected shape');
            return false;
          },
        },
      ],
    },
  ];
  const tests = pluginEventTests(plugins);
  // 'b' waits everywhere anyway (one subscriber names no connections): no test for it.
  expect([...tests.keys()]).toEqual(['a']);
  // A test that throws counts as passed: the event waits for the plugins, the change is not lost.
  expect([1, 2, 3, 4].map((n) => tests.get('a')!({ n }))).toEqual([true, true, false, true]);
});

test('with the shipped plugins, deliveries wait only on inbox connections; incoming messages on inbox and campaign connections, and stop words everywhere', () => {
  const named = pluginEventConnections(AVAILABLE_PLUGINS);
  expect(named.get('send.message')?.map((t) => t.table)).toEqual(['helpdesk_inboxes']);
  expect(named.get('messages.update')?.map((t) => t.table)).toEqual(['helpdesk_inboxes']);
  expect(named.get('messages.upsert')?.map((t) => t.table).sort()).toEqual(['campaigns', 'helpdesk_inboxes']);
  expect(pluginEvents(AVAILABLE_PLUGINS).has('messages.upsert')).toBe(true);
  const stopWord = pluginEventTests(AVAILABLE_PLUGINS).get('messages.upsert')!;
  expect(stopWord({ messageType: 'conversation', message: { conversation: 'STOP' } })).toBe(true);
  expect(stopWord({ messageType: 'extendedTextMessage', message: { extendedTextMessage: { text: 'Baja' } } })).toBe(true);
  expect(stopWord({ messageType: 'conversation', message: { conversation: 'please stop by tomorrow' } })).toBe(false);
  expect(stopWord({ messageType: 'imageMessage', message: { imageMessage: {} } })).toBe(false);
});
