import { errorField } from '../adapters/logging/logger.ts';
import type { Selectable } from 'kysely';
import type { AppContext } from '../adapters/http/context.ts';
import { PLUGIN_EVENTS_QUEUE, type ConnectionTable, type PluginEventConnections, type PluginEventTests } from '../adapters/postgres/repositories/event-store.ts';
import { pluginEventQueue, type ClaimedPluginEvent } from '../adapters/postgres/repositories/plugin-event-queue.ts';
import type { EventsTable } from '../adapters/postgres/schema.ts';
import { PollingLoop, type StepResult } from '../adapters/queue/polling-loop.ts';
import { wakeOnNotify } from '../adapters/queue/notify-wake.ts';
import type { DatabaseHandle } from '../adapters/postgres/database.ts';
import type { JobDefinition } from '../adapters/queue/queue.ts';
import type { PluginEventPayload } from '../plugins/kernel/events.ts';
import type { EventSubscriber, Plugin } from '../plugins/kernel/plugin.ts';

/** Events taken per claim. */
const BATCH = 100;
/** Chats whose events run side by side (a chat's own events run one after another, in order). */
const LANES = 8;
/** A claim's hold on its events (wall-clock); a worker that dies lets them go when it lapses. */
const LEASE_MS = 60_000;
/** Runs of an event whose subscriber keeps throwing before it is given up (1 s, 2 s, 4 s… apart). */
const MAX_RUNS = 6;

/** The events the enabled plugins subscribe to (the event store queues a job only for these). */
export function pluginEvents(plugins: Plugin[]): ReadonlySet<string> {
  return new Set(plugins.flatMap((p) => (p.subscribers ?? []).map((s) => s.event)));
}

/** Of those, the events every subscriber of which names the connections it takes them on, with those tables. */
export function pluginEventConnections(plugins: Plugin[]): PluginEventConnections {
  const byEvent = new Map<string, Array<ConnectionTable | undefined>>();
  for (const subscriber of plugins.flatMap((p) => p.subscribers ?? [])) {
    byEvent.set(subscriber.event, [...(byEvent.get(subscriber.event) ?? []), subscriber.onlyOnConnectionsIn]);
  }
  const named = new Map<string, ConnectionTable[]>();
  for (const [event, tables] of byEvent) {
    if (tables.every((table) => table !== undefined)) named.set(event, tables as ConnectionTable[]);
  }
  return named;
}

/**
 * Of the events the plugins take only on some connections, those some subscriber takes anywhere
 * when its test of the event's data passes (`alsoWhen`), with the tests combined: any passes. A
 * test that throws counts as passed: the event then waits for the plugins, and the change that
 * caused it is still written (the test runs inside that change's transaction).
 */
export function pluginEventTests(plugins: Plugin[]): PluginEventTests {
  const named = pluginEventConnections(plugins);
  const tests = new Map<string, Array<(data: unknown) => boolean>>();
  for (const subscriber of plugins.flatMap((p) => p.subscribers ?? [])) {
    if (!named.has(subscriber.event) || !subscriber.alsoWhen) continue;
    tests.set(subscriber.event, [...(tests.get(subscriber.event) ?? []), subscriber.alsoWhen.bind(subscriber)]);
  }
  return new Map([...tests].map(([event, all]) => [event, (data: unknown) => all.some((test) => passes(test, data))]));
}

function passes(test: (data: unknown) => boolean, data: unknown): boolean {
  try {
    return test(data);
  } catch {
    return true;
  }
}

/**
 * Runs the enabled plugins' subscribers of the events waiting in `plugin_event_queue` (written
 * with each event, adapters/postgres/repositories/event-store.ts, so a crash loses neither),
 * claimed a batch at a time under a lease. A chat's events run in order; a subscriber that throws
 * runs its event's subscribers again later (1 s, 2 s, 4 s…, six runs in all): subscribers are
 * idempotent by contract (the helpdesk's key on the connection message id), as they are when a
 * worker dies mid-batch and another takes the batch over.
 */
export function startPluginEventRunner(ctx: AppContext, plugins: Plugin[], database: DatabaseHandle): { running(): boolean; stop(): Promise<void> } {
  const subscribed = plugins.flatMap((p) => p.subscribers ?? []);
  if (subscribed.length === 0) return { running: () => true, stop: async () => {} };
  const queue = pluginEventQueue(ctx.db);
  // Between batches the loop waits for the queue's NOTIFY (base migration 0020), or polls: every
  // 40 ms while busy, backing off to 250 ms when idle. A batch is whatever arrived while the one
  // before ran, so the queue is still taken in batches under load.
  const loop = new PollingLoop('plugin events', runBatch, 40, 250).start();
  const stopListening = wakeOnNotify(database, 'plugin_event_queue', () => loop.wake());
  let stopping = false;

  async function runBatch(): Promise<StepResult> {
    const now = new Date();
    const claimId = ctx.ids.next();
    const claimed = await queue.claim({ claimId, now, claimedUntil: new Date(now.getTime() + LEASE_MS), limit: BATCH });
    if (claimed.length === 0) return 'none';
    const chats = new Map<string, ClaimedPluginEvent[]>();
    for (const c of claimed) {
      // A contact's events in order; a connection's own events (connection.update) in order too,
      // and a workspace's events of neither (the helpdesk's) in order among themselves.
      const chat = c.event.remote_jid
        ? `${c.event.workspace_id}|${c.event.connection_id ?? ''}|${c.event.remote_jid}`
        : (c.event.connection_id ?? `workspace|${c.event.workspace_id}`);
      chats.set(chat, [...(chats.get(chat) ?? []), c]);
    }
    const lanes = [...chats.values()];
    const selected = await selections(subscribed, ctx, claimed.map((c) => c.event));
    const done: string[] = [];
    const left: string[] = [];
    await Promise.all(
      Array.from({ length: Math.min(LANES, lanes.length) }, async () => {
        for (let chat = lanes.shift(); chat; chat = lanes.shift()) {
          for (const { event, attempts } of chat) {
            // A stopping worker runs no further event: the rest go back at once, in their order.
            if (stopping) {
              left.push(event.id);
              continue;
            }
            try {
              await runSubscribers(subscribed, ctx, event, selected);
              done.push(event.id);
            } catch (error) {
              const fields = { event: event.event, eventId: event.id, runs: attempts + 1, error: errorField(error) };
              if (attempts + 1 >= MAX_RUNS) {
                ctx.log.error(fields, 'plugin event subscriber failed; giving up');
                done.push(event.id);
              } else {
                ctx.log.warn(fields, 'plugin event subscriber failed; trying again');
                await queue.retry(claimId, event.id, new Date(Date.now() + 1000 * 2 ** attempts));
              }
            }
          }
        }
      }),
    );
    await queue.done(claimId, done);
    await queue.release(claimId, left);
    return claimed.length >= BATCH ? 'full' : 'some';
  }

  return {
    running: () => loop.isRunning,
    async stop() {
      stopping = true;
      await stopListening();
      await loop.stop();
    },
  };
}

/**
 * Runs the subscribers of one stored event, in the order the plugins declared them; a subscriber
 * that selects its events (`select`) runs only on those it selected in this batch.
 */
async function runSubscribers(subscribed: EventSubscriber[], ctx: AppContext, row: Selectable<EventsTable>, selected?: Selections): Promise<void> {
  const payload = payloadOf(row);
  for (const subscriber of subscribed) {
    if (subscriber.event !== row.event) continue;
    if (selected?.get(subscriber)?.has(row.id) === false) continue;
    await subscriber.handle(payload, ctx);
  }
}

type Selections = Map<EventSubscriber, ReadonlySet<string>>;

/** What each selecting subscriber wants of a batch, asked once; a failing `select` selects everything. */
async function selections(subscribed: EventSubscriber[], ctx: AppContext, rows: Selectable<EventsTable>[]): Promise<Selections> {
  const selected: Selections = new Map();
  for (const subscriber of subscribed) {
    if (!subscriber.select) continue;
    const theirs = rows.filter((row) => row.event === subscriber.event);
    if (theirs.length === 0) continue;
    try {
      selected.set(subscriber, await subscriber.select(theirs.map(payloadOf), ctx));
    } catch (error) {
      ctx.log.error({ event: subscriber.event, error: errorField(error) }, 'selecting plugin events failed, running them all');
    }
  }
  return selected;
}

function payloadOf(row: Selectable<EventsTable>): PluginEventPayload {
  const stored = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { sender?: string; data?: unknown };
  return {
    eventId: row.id,
    workspaceId: row.workspace_id,
    event: row.event,
    connectionId: row.connection_id,
    remoteJid: row.remote_jid,
    sender: stored.sender,
    data: stored.data,
  };
}

/**
 * Runs the enabled plugins' subscribers of one event queued as a job (before events waited in
 * `plugin_event_queue`); pg-boss retries a job that throws.
 */
export function pluginEventJobs(ctx: AppContext, plugins: Plugin[]): JobDefinition[] {
  const subscribed = plugins.flatMap((p) => p.subscribers ?? []);
  if (subscribed.length === 0) return [];
  return [
    {
      queue: PLUGIN_EVENTS_QUEUE,
      retryLimit: 5,
      retryDelay: 1,
      retryBackoff: true,
      expireInSeconds: 60,
      concurrency: 1,
      batchSize: 10,
      handle: async (data: { eventId: string }) => {
        const row = await ctx.db.selectFrom('events').selectAll().where('id', '=', data.eventId).executeTakeFirst();
        if (row) await runSubscribers(subscribed, ctx, row);
      },
    },
  ];
}
