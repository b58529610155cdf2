import { afterAll, beforeAll, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { eventPublisher } from '../../adapters/postgres/repositories/event-store.ts';
import { uuidV7 } from '../../adapters/system.ts';
import { startPluginEventRunner } from '../../apps/plugin-events.ts';
import { wakeOnNotify } from '../../adapters/queue/notify-wake.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import { eventually } from '../support/helpdesk.ts';
import { openTestContext, type TestContext } from '../support/context.ts';

/**
 * The plugins' event queue (apps/plugin-events.ts): an event some enabled plugin subscribes to
 * waits in `plugin_event_queue`, written in the event's own statement, and the worker runs its
 * subscribers in claimed batches. ARCHITECTURE "Plugin contract": subscribers run in the worker,
 * at least once per event, idempotent by contract; a crash loses no event.
 */

let t: TestContext;
let workspaceId: string;
const EVENT = 'probe.happened';
/** What the subscriber saw, in order: `${chat}:${seq}` per successful run. */
const handled: string[] = [];
/** Events whose subscriber throws this many more times before it succeeds. */
const failuresLeft = new Map<string, number>();
const runs = new Map<string, number>();

const probe: Plugin = {
  name: 'probe',
  subscribers: [
    {
      event: EVENT,
      async handle(payload: any) {
        const tag = `${payload.remoteJid}:${payload.data.seq}`;
        runs.set(tag, (runs.get(tag) ?? 0) + 1);
        const left = failuresLeft.get(tag) ?? 0;
        if (left > 0) {
          failuresLeft.set(tag, left - 1);
          throw new Error(`probe failure for ${tag}`);
        }
        // A moment of work, so events of different chats really overlap.
        await Bun.sleep(Math.random() * 3);
        handled.push(tag);
      },
    },
  ],
} as Plugin;

beforeAll(async () => {
  t = await openTestContext();
  workspaceId = uuidV7.next();
  await t.ctx.db.insertInto('workspaces').values({ id: workspaceId, name: 'Probe', is_personal: false, plan: 'PRO', created_at: new Date() } as any).execute();
}, 60_000);

afterAll(async () => {
  await t?.close();
}, 60_000);

/**
 * Publishes an event as the base does, in a transaction of its own (or one that rolls back):
 * `probe.happened` in a chat unless told otherwise (`chat: null` names no contact).
 */
async function publish(chat: string | null, seq: number, options: { rollBack?: boolean; event?: string } = {}): Promise<void> {
  const event = options.event ?? EVENT;
  await t.ctx.db
    .transaction()
    .execute(async (trx) => {
      await eventPublisher(trx, { ids: uuidV7, clock: t.ctx.clock, pluginEvents: new Set([event]) }).publish({ workspaceId, connectionId: '', event, remoteJid: chat, sender: '', data: { seq } });
      if (options.rollBack) throw new Error('rolled back');
    })
    .catch((error: Error) => {
      if (!options.rollBack) throw error;
    });
}

/** Runs `work` while a plugin event runner serves these plugins, and stops the runner after, whatever happens. */
async function whileRunning(plugins: Plugin[], work: () => Promise<void>): Promise<void> {
  const runner = startPluginEventRunner(t.ctx, plugins, t.database);
  try {
    await work();
  } finally {
    await runner.stop();
  }
}

async function waiting(): Promise<number> {
  const { n } = await t.ctx.db.selectFrom('plugin_event_queue').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

test('every event runs its subscribers once, a chat’s events in the order they happened, chats side by side', async () => {
  handled.length = 0;
  const chats = ['a', 'b', 'c'];
  for (let seq = 0; seq < 40; seq++) await publish(chats[seq % 3]!, seq);
  expect(await waiting()).toBe(40);
  await whileRunning([probe], async () => {
    await eventually(async () => (handled.length === 40 && (await waiting()) === 0 ? true : undefined), 'every event handled');
    expect(new Set(handled).size).toBe(40);
    for (const chat of chats) {
      const seqs = handled.filter((h) => h.startsWith(`${chat}:`)).map((h) => Number(h.split(':')[1]));
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
  });
}, 60_000);

test('a subscriber that throws runs again later (1 s, then 2 s) and the others go on meanwhile', async () => {
  handled.length = 0;
  failuresLeft.set('d:0', 2);
  await whileRunning([probe], async () => {
    const started = Date.now();
    await publish('d', 0);
    await publish('e', 1);
    await eventually(async () => (handled.includes('e:1') ? true : undefined), 'the healthy event');
    expect(handled).not.toContain('d:0');
    await eventually(async () => (handled.includes('d:0') ? true : undefined), 'the failing event, third run', 20_000);
    expect(runs.get('d:0')).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000 - 100);
    await eventually(async () => ((await waiting()) === 0 ? true : undefined), 'the queue to empty');
  });
}, 60_000);

test('a rolled-back change queues nothing; events claimed by a worker that died are taken over once its lease lapses', async () => {
  handled.length = 0;
  await publish('f', 0, { rollBack: true });
  expect(await waiting()).toBe(0);

  // A worker claimed these and died: one lease has lapsed, one is still running.
  await publish('g', 1);
  await publish('h', 2);
  const rows = await t.ctx.db.selectFrom('plugin_event_queue').innerJoin('events', 'events.id', 'plugin_event_queue.event_id').select(['event_id', 'events.remote_jid']).execute();
  const lapsed = rows.find((r) => r.remote_jid === 'g')!.event_id;
  const live = rows.find((r) => r.remote_jid === 'h')!.event_id;
  await t.ctx.db.updateTable('plugin_event_queue').set({ claim_id: uuidV7.next(), claimed_until: new Date(Date.now() - 1_000) }).where('event_id', '=', lapsed).execute();
  await t.ctx.db.updateTable('plugin_event_queue').set({ claim_id: uuidV7.next(), claimed_until: new Date(Date.now() + 60_000) }).where('event_id', '=', live).execute();

  await whileRunning([probe], async () => {
    await eventually(async () => (handled.includes('g:1') ? true : undefined), 'the lapsed claim taken over');
    // A sleep: the live claim holds for a minute, so there is nothing to wait for but time.
    await Bun.sleep(500);
    // The other is still its (live) worker's: not run twice at once.
    expect(handled).toEqual(['g:1']);
    expect(await waiting()).toBe(1);
    expect(runs.has('f:0')).toBe(false);
  });
}, 60_000);

test('a subscriber that selects its events is asked once per batch and runs only on those it selected; if selecting fails, it runs on all', async () => {
  const SELECTED = 'probe.selected';
  const asked: number[] = [];
  const ran: number[] = [];
  let failSelect = false;
  const selective = {
    name: 'selective',
    subscribers: [
      {
        event: SELECTED,
        async handle(payload: any) {
          ran.push(payload.data.seq);
        },
        async select(payloads: any[]) {
          asked.push(payloads.length);
          if (failSelect) throw new Error('the selecting read failed');
          return new Set(payloads.filter((p) => p.data.seq % 3 === 0).map((p) => p.eventId as string));
        },
      },
    ],
  } as Plugin;
  const publishSelected = (seq: number) => publish(`s${seq % 4}`, seq, { event: SELECTED });
  const left = async () => {
    const rows = await t.ctx.db.selectFrom('plugin_event_queue').innerJoin('events', 'events.id', 'plugin_event_queue.event_id').select('events.id').where('events.event', '=', SELECTED).execute();
    return rows.length;
  };

  for (let seq = 0; seq < 30; seq++) await publishSelected(seq);
  // An event is due from its insert on the database's clock; the runner claims on this process's.
  await Bun.sleep(50);
  await whileRunning([selective], async () => {
    await eventually(async () => ((await left()) === 0 ? true : undefined), 'the selected events handled, the others done');
    // Every event asked about once, in batches (one, unless the clocks split it), not one by one.
    expect(asked.reduce((sum, n) => sum + n, 0)).toBe(30);
    expect(asked.length).toBeLessThanOrEqual(2);
    expect(ran.sort((a, b) => a - b)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27]);
  });

  failSelect = true;
  ran.length = 0;
  for (let seq = 100; seq < 105; seq++) await publishSelected(seq);
  await whileRunning([selective], async () => {
    await eventually(async () => ((await left()) === 0 ? true : undefined), 'every event handled');
    expect(ran.sort((a, b) => a - b)).toEqual([100, 101, 102, 103, 104]);
  });
}, 60_000);

test('a workspace’s events of no chat and no connection (the helpdesk’s) run in the order they happened', async () => {
  const WORKSPACE_EVENT = 'probe.workspace';
  const seen: number[] = [];
  const plugin = {
    name: 'workspace-probe',
    subscribers: [
      {
        event: WORKSPACE_EVENT,
        async handle(payload: any) {
          // Uneven work: run side by side, later events would overtake earlier ones.
          await Bun.sleep(Math.random() * 5);
          seen.push(payload.data.seq);
        },
      },
    ],
  } as Plugin;
  for (let seq = 0; seq < 25; seq++) await publish(null, seq, { event: WORKSPACE_EVENT });
  await whileRunning([plugin], async () => {
    await eventually(async () => (seen.length === 25 ? true : undefined), 'every event handled');
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });
}, 60_000);

test('a queued event is announced on `plugin_event_queue` when its transaction commits, so a listening worker claims it at once; a statement that queued none announces nothing', async () => {
  let announced = 0;
  const stop = wakeOnNotify(t.database, 'plugin_event_queue', () => (announced += 1));
  try {
    // Listening has started (it wakes once when it does).
    await eventually(async () => (announced > 0 ? true : undefined), 'listening');
    const before = announced;
    await publish(null, 1, { rollBack: true });
    // A statement that inserts no rows (the plugins' share of the events it logs is empty)
    // announces nothing: it would wake every listening worker to claim nothing.
    await sql`insert into plugin_event_queue select * from plugin_event_queue where false`.execute(t.ctx.db);
    await publish(null, 2);
    await eventually(async () => (announced > before ? true : undefined), 'the committed event announced');
    // Notifications arrive in commit order and within moments: a stray one would be here by now.
    await Bun.sleep(300);
    expect(announced).toBe(before + 1);
  } finally {
    await stop();
    await t.ctx.db.deleteFrom('plugin_event_queue').execute();
  }
}, 60_000);
