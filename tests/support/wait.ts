import { expect } from 'bun:test';
import type { TestService } from './service.ts';

/**
 * Waiting for something to happen instead of sleeping for a fixed time: a test goes on as soon
 * as the condition holds and fails with a message naming what it waited for when it never does.
 * A test that must let time pass (proving that something does NOT happen within a window, a
 * lease or a TTL running out) still sleeps, with a comment saying why.
 */

export interface WaitOptions {
  /** What is awaited, for the failure message (a function: asked when it fails). */
  what?: string | (() => string);
  /** Give up after this many milliseconds (default 20 s). */
  timeout?: number;
  /** Look again after this many milliseconds (default 50). */
  interval?: number;
}

/** Polls `read` until it answers something other than `undefined`; answers that value. */
export async function waitFor<T>(read: () => T | undefined | Promise<T | undefined>, { what = 'a condition', timeout = 20_000, interval = 50 }: WaitOptions = {}): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await Bun.sleep(interval);
  }
}

/** Polls `read` until it answers something other than `undefined`; fails after `timeoutMs` naming `what`. */
export function eventually<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  return waitFor(read, { what, timeout: timeoutMs, interval: 100 });
}

/** Polls `read` until its value passes `done`; answers that value. */
export function waitUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, options: WaitOptions = {}): Promise<T> {
  return waitFor(async () => {
    const value = await read();
    return done(value) ? value : undefined;
  }, options);
}

/** The message `id` of the connection's chats, as REST answers it (200 every time), once it passes `done`. */
export function chatMessageWhen(service: TestService, apikey: string, connectionId: string, id: string, done: (message: any) => boolean, options: WaitOptions = {}): Promise<any> {
  return waitUntil(
    async () => {
      const res = await service.call('GET', `/v3/connections/${connectionId}/chats/messages/${id}`, { apikey });
      expect(res.status).toBe(200);
      return res.body;
    },
    done,
    { what: `message ${id}`, interval: 100, ...options },
  );
}

/** The message `id` once it has left PENDING and is in a state of its own (SENT, FAILED, ...). */
export function messageSettled(service: TestService, apikey: string, connectionId: string, id: string, options: WaitOptions = {}): Promise<any> {
  return chatMessageWhen(service, apikey, connectionId, id, (m) => m?.status !== undefined && m.status !== 'PENDING', { what: `message ${id} to leave PENDING`, ...options });
}

/** The message `id` once its status is `status`. */
export function messageReached(service: TestService, apikey: string, connectionId: string, id: string, status: string, options: WaitOptions = {}): Promise<any> {
  return chatMessageWhen(service, apikey, connectionId, id, (m) => m?.status === status, { what: `message ${id} to reach ${status}`, ...options });
}

/**
 * Waits until the worker has run every subscriber of the latest event of this type in the
 * workspace whose data passes `predicate` (it left the plugins' event queue): for asserting that
 * a reaction did not happen.
 */
export async function subscribersDone(service: TestService, workspaceId: string, type: string, predicate: (data: any) => boolean = () => true): Promise<void> {
  const eventId = await eventually(async () => {
    const rows = await service.runtime.ctx.db.selectFrom('events').select(['id', 'payload']).where('workspace_id', '=', workspaceId).where('event', '=', type).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.find((r) => predicate((typeof r.payload === 'string' ? JSON.parse(r.payload) : (r.payload as any)).data))?.id;
  }, `a ${type} event`);
  await eventually(async () => {
    const waiting = await service.runtime.ctx.db.selectFrom('plugin_event_queue').select('event_id').where('event_id', '=', eventId).executeTakeFirst();
    return waiting ? undefined : true;
  }, `the subscribers of ${type} ${eventId}`);
}

/**
 * Waits until every webhook delivery the events so far make has been recorded: the worker has
 * settled (no fan-out, no job) and no delivery (of these webhooks, or of any) waits for an
 * attempt. What did not arrive by then never will: for asserting that something was not sent.
 */
export async function deliveriesSettled(service: TestService, webhookIds: string[] = [], timeoutMs = 20_000): Promise<void> {
  await workerSettled(service, [], timeoutMs);
  await eventually(
    async () => {
      let query = service.runtime.ctx.db.selectFrom('webhook_deliveries').select('id').where('state', 'in', ['PENDING', 'RETRYING']);
      if (webhookIds.length) query = query.where('webhook_id', 'in', webhookIds);
      return (await query.executeTakeFirst()) ? undefined : true;
    },
    'the webhook deliveries to be recorded',
    timeoutMs,
  );
}

/**
 * Waits until the worker has nothing left to do now: no job queued, retrying or running, in any
 * queue but those named (jobs scheduled for later, e.g. SLA deadlines), and no event waiting for
 * the plugins' subscribers or the webhooks' fan-out. For scripts on a model clock, so that every
 * reaction to a step happens before the clock moves on, and for asserting what did not happen.
 */
export async function workerSettled(service: TestService, ignoredQueues: string[] = [], timeoutMs = 20_000): Promise<void> {
  let busy: string[] = [];
  const stillBusy = async () => {
    busy = await workInProgress(service, ignoredQueues);
    return busy.length > 0;
  };
  // Twice idle in a row: a job may complete and queue the next in between.
  await waitFor(async () => (!(await stillBusy()) && (await Bun.sleep(50), !(await stillBusy())) ? true : undefined), {
    what: () => `the worker to settle (still busy: ${busy.join(', ')})`,
    timeout: timeoutMs,
    interval: 100,
  });
}

/** What the worker still has to do now, by queue or table: empty when it has settled. */
async function workInProgress(service: TestService, ignoredQueues: string[]): Promise<string[]> {
  const db = service.runtime.ctx.db;
  let query = db
    .selectFrom('pgboss.job' as any)
    .select(['name' as any, (eb: any) => eb.fn.countAll().as('n')])
    .where('state' as any, 'in', ['created', 'retry', 'active'])
    .groupBy('name' as any);
  if (ignoredQueues.length) query = query.where('name' as any, 'not in', ignoredQueues);
  const jobs = ((await query.execute()) as Array<{ name: string; n: string | number }>).map((r) => `${r.n} ${r.name}`);
  // Events waiting for the plugins' subscribers or the webhooks' fan-out (tables of their own).
  const { n: events } = await db.selectFrom('plugin_event_queue').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const { n: fanouts } = await db.selectFrom('webhook_fanout').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return [...jobs, ...(Number(events) ? [`${events} plugin events`] : []), ...(Number(fanouts) ? [`${fanouts} fan-outs`] : [])];
}
