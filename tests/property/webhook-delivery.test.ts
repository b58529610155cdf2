import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { AppContext } from '../../adapters/http/context.ts';
import { uuidV7 } from '../../adapters/system.ts';
import { messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { dispatchDeps } from '../../adapters/webhooks/jobs.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { DomainError } from '../../core/shared/errors.ts';
import {
  afterAttempt,
  DELIVERY_TRANSITIONS,
  FIRST_RETRY_SECONDS,
  MAX_ATTEMPTS,
  mayAttempt,
  redeliver,
  REQUEST_TIMEOUT_MS,
  retryDelaySeconds,
  succeeded,
  type AttemptOutcome,
  type DeliveryProgress,
  type DeliveryState,
} from '../../core/webhooks/delivery.ts';
import { attemptDelivery, DELIVER_QUEUE, redeliverDelivery, type DispatchDeps, type WebhookSender } from '../../core/webhooks/dispatch.ts';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyDelivery } from '../../core/webhooks/signature.ts';
import { createWebhook } from '../../core/webhooks/webhooks.ts';
import type { Webhook } from '../../core/webhooks/webhook.ts';
import type { TestDatabase } from '../support/database.ts';
import { openTestContext, type TestContext } from '../support/context.ts';

/**
 * The retry schedule and attempt states of a connection-webhook delivery (issue 4 Tests:
 * "random endpoint behaviours never give more than 3 attempts or deliver an event twice as
 * success").
 *
 * Spec 6.4:
 * | Success         | any status below 400 |
 * | Failure         | 4xx, 5xx or timeout: retried; 3 attempts in total, exponential backoff starting at 5 seconds |
 * | Request timeout | 10 seconds |
 * Spec 8: "Webhook delivery | 3 attempts, backoff from 5 s, 10 s timeout".
 * Issue 4 item 4: "a manual redelivery of a failed event".
 *
 * The model: the state, the attempts of the current round, and (for the whole life of the
 * delivery) how many attempts were made and how many succeeded. A round is the three attempts
 * a delivery gets by itself; a manual redelivery of a FAILED delivery starts a new one.
 *   - an attempt is possible only in PENDING or RETRYING;
 *   - status < 400 → SUCCEEDED (terminal: nothing is sent again);
 *   - otherwise (4xx/5xx/1xx-3xx never fail; errors such as timeouts always do) → RETRYING with
 *     a retry 5 s later after attempt 1, 10 s after attempt 2; FAILED after attempt 3;
 *   - redeliver only from FAILED → PENDING with 0 attempts.
 */

interface Model {
  state: DeliveryState;
  /** Attempts in the current round. */
  attempts: number;
  /** Attempts over the delivery's whole life (every round). */
  lifetimeAttempts: number;
  successes: number;
}

const freshModel = (): Model => ({ state: 'PENDING', attempts: 0, lifetimeAttempts: 0, successes: 0 });
const modelMayAttempt = (m: Model) => m.state === 'PENDING' || m.state === 'RETRYING';
const modelSucceeds = (o: AttemptOutcome) => 'status' in o && o.status < 400;
/** Spec 6.4's backoff: 5 s after the first attempt, 10 s after the second (doubling from 5). */
const expectedDelay = (attemptsMade: number) => [5, 10][attemptsMade - 1];

/** Applies one attempt to the model; returns the retry delay the model expects (or null). */
function modelAttempt(m: Model, o: AttemptOutcome): number | null {
  m.attempts += 1;
  m.lifetimeAttempts += 1;
  if (modelSucceeds(o)) {
    m.state = 'SUCCEEDED';
    m.successes += 1;
    return null;
  }
  if (m.attempts >= 3) {
    m.state = 'FAILED';
    return null;
  }
  m.state = 'RETRYING';
  return expectedDelay(m.attempts)!;
}

function checkModelInvariants(m: Model): void {
  expect(m.attempts).toBeLessThanOrEqual(3);
  expect(m.successes).toBeLessThanOrEqual(1);
}

// ------------------------------------------------------------------------------------------
// Endpoint behaviours
// ------------------------------------------------------------------------------------------

const ERRORS = [`timeout after ${REQUEST_TIMEOUT_MS} ms`, 'Unable to connect. Is the computer able to access the url?', 'ECONNRESET', 'socket hang up', 'certificate has expired'];

/** What an endpoint does with one request: any status 100–599 (failures likelier), or no answer. */
const outcomeArb: fc.Arbitrary<AttemptOutcome> = fc.oneof(
  { arbitrary: fc.integer({ min: 100, max: 599 }).map((status) => ({ status })), weight: 3 },
  { arbitrary: fc.integer({ min: 400, max: 599 }).map((status) => ({ status })), weight: 3 },
  { arbitrary: fc.constantFrom(200, 201, 202, 204, 301, 302, 399, 400, 404, 429, 500, 502, 503).map((status) => ({ status })), weight: 2 },
  { arbitrary: fc.constantFrom(...ERRORS).map((error) => ({ error })), weight: 2 },
);

const describeOutcome = (o: AttemptOutcome) => ('status' in o ? String(o.status) : `error(${o.error})`);

// ------------------------------------------------------------------------------------------
// Pure core
// ------------------------------------------------------------------------------------------

interface PureReal {
  progress: DeliveryProgress;
}

class Attempt implements fc.Command<Model, PureReal> {
  constructor(readonly outcome: AttemptOutcome) {}
  check = () => true;
  run(m: Model, r: PureReal) {
    expect(mayAttempt(r.progress)).toBe(modelMayAttempt(m));
    if (!modelMayAttempt(m)) {
      // A settled delivery takes no more attempts: never a second success, never a 4th attempt.
      expect(() => afterAttempt(r.progress, this.outcome)).toThrow();
      return;
    }
    const next = afterAttempt(r.progress, this.outcome);
    const delay = modelAttempt(m, this.outcome);
    expect(next.progress).toEqual({ state: m.state, attempts: m.attempts });
    expect(next.retryInSeconds).toBe(delay);
    r.progress = next.progress;
    checkModelInvariants(m);
  }
  toString = () => `attempt(${describeOutcome(this.outcome)})`;
}

class Redeliver implements fc.Command<Model, PureReal> {
  check = () => true;
  run(m: Model, r: PureReal) {
    if (m.state !== 'FAILED') {
      expect(() => redeliver(r.progress)).toThrow();
      return;
    }
    r.progress = redeliver(r.progress);
    m.state = 'PENDING';
    m.attempts = 0;
    expect(r.progress).toEqual({ state: 'PENDING', attempts: 0 });
    expect(mayAttempt(r.progress)).toBe(true);
  }
  toString = () => 'redeliver';
}

const pureCommands = [outcomeArb.map((o) => new Attempt(o)), fc.constant(new Redeliver())];

describe('webhook delivery: the pure state machine against the model', () => {
  test('the constants and the transition table are spec 6.4', () => {
    expect(MAX_ATTEMPTS).toBe(3);
    expect(FIRST_RETRY_SECONDS).toBe(5);
    expect(REQUEST_TIMEOUT_MS).toBe(10_000);
    expect([1, 2].map(retryDelaySeconds)).toEqual([5, 10]);
    const table = DELIVERY_TRANSITIONS.flatMap((t) =>
      [1, 2, 3].filter((n) => t.guard(n)).map((n) => `${t.from} --${t.on} (attempt ${n})--> ${t.to}`),
    ).sort();
    expect(table).toEqual(
      [
        'PENDING --success (attempt 1)--> SUCCEEDED',
        'PENDING --failure (attempt 1)--> RETRYING',
        'PENDING --failure (attempt 2)--> RETRYING',
        'PENDING --failure (attempt 3)--> FAILED',
        'RETRYING --success (attempt 1)--> SUCCEEDED',
        'RETRYING --success (attempt 2)--> SUCCEEDED',
        'RETRYING --success (attempt 3)--> SUCCEEDED',
        'RETRYING --failure (attempt 1)--> RETRYING',
        'RETRYING --failure (attempt 2)--> RETRYING',
        'RETRYING --failure (attempt 3)--> FAILED',
        // PENDING is only ever the state before attempt 1; the table allows the others harmlessly.
        'PENDING --success (attempt 2)--> SUCCEEDED',
        'PENDING --success (attempt 3)--> SUCCEEDED',
      ].sort(),
    );
    // No transition out of a settled state: SUCCEEDED and FAILED are final (FAILED leaves only by hand).
    expect(DELIVERY_TRANSITIONS.filter((t) => t.from === 'SUCCEEDED' || t.from === 'FAILED')).toEqual([]);
  });

  test('success is any status below 400; 4xx, 5xx and errors fail', () => {
    fc.assert(
      fc.property(outcomeArb, (o) => {
        expect(succeeded(o)).toBe(modelSucceeds(o));
      }),
      { numRuns: 2000 },
    );
    expect(succeeded({ status: 399 })).toBe(true);
    expect(succeeded({ status: 400 })).toBe(false);
    expect(succeeded({ status: 100 })).toBe(true);
    expect(succeeded({ error: `timeout after ${REQUEST_TIMEOUT_MS} ms` })).toBe(false);
  });

  test('random sequences of attempts (any endpoint behaviour) and manual redeliveries', () => {
    fc.assert(
      fc.property(fc.commands(pureCommands, { maxCommands: 40 }), (cmds) => {
        fc.modelRun(() => ({ model: freshModel(), real: { progress: { state: 'PENDING', attempts: 0 } } }), cmds);
      }),
      { numRuns: 1000 },
    );
  });

  test('an endpoint that behaves at random, driven as the queue drives it: ≤ 3 attempts, ≤ 1 success, the 5 s / 10 s schedule', () => {
    fc.assert(
      fc.property(fc.array(outcomeArb, { minLength: 0, maxLength: 8 }), (behaviour) => {
        let progress: DeliveryProgress = { state: 'PENDING', attempts: 0 };
        const delays: number[] = [];
        let calls = 0;
        let successes = 0;
        // The queue runs an attempt while one is allowed; the endpoint answers from its script
        // (and keeps failing once the script runs out).
        while (mayAttempt(progress)) {
          const outcome = behaviour[calls] ?? { error: `timeout after ${REQUEST_TIMEOUT_MS} ms` };
          calls += 1;
          if (succeeded(outcome)) successes += 1;
          const next = afterAttempt(progress, outcome);
          if (next.retryInSeconds !== null) delays.push(next.retryInSeconds);
          progress = next.progress;
        }
        expect(calls).toBeLessThanOrEqual(3);
        expect(successes).toBeLessThanOrEqual(1);
        const firstSuccess = behaviour.findIndex((o) => succeeded(o));
        if (firstSuccess >= 0 && firstSuccess < 3) {
          expect(progress).toEqual({ state: 'SUCCEEDED', attempts: firstSuccess + 1 });
          expect(calls).toBe(firstSuccess + 1);
        } else {
          expect(progress).toEqual({ state: 'FAILED', attempts: 3 });
          expect(calls).toBe(3);
        }
        expect(delays).toEqual([5, 10].slice(0, calls - 1));
      }),
      { numRuns: 2000 },
    );
  });
});

// ------------------------------------------------------------------------------------------
// attemptDelivery on real stores, with a scripted sender standing in for the network
// ------------------------------------------------------------------------------------------

let database: TestDatabase;
let testContext: TestContext;
let ctx: AppContext;
let deps: DispatchDeps;
let actor: Actor;
let signed: Webhook;
let unsigned: Webhook;

beforeAll(async () => {
  testContext = await openTestContext();
  ({ ctx, database } = testContext);
  deps = dispatchDeps(ctx);
  const uow = messagingUnitOfWork(ctx);
  ({ actor, signed, unsigned } = await uow.transaction(async (stores) => {
    const owner = await bootstrapOwner(stores, ctx, { email: `delivery-${crypto.randomUUID().slice(0, 8)}@example.com`, workspace: 'Deliveries', plan: 'PRO' });
    const actor: Actor = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] };
    const signed = await createWebhook(stores, ctx, actor, { url: 'http://receiver.invalid/signed', events: ['messages.upsert'], hmacEnabled: true });
    const unsigned = await createWebhook(stores, ctx, actor, { url: 'http://receiver.invalid/plain', events: ['messages.upsert'] });
    return { actor, signed, unsigned };
  }));
}, 60_000);

afterAll(async () => {
  await testContext?.close();
}, 60_000);

/** The network stand-in: answers each request with the outcome the command scripted. */
class ScriptedSender implements WebhookSender {
  script: AttemptOutcome[] = [];
  calls: { url: string; body: string; headers: Record<string, string>; timeoutMs: number }[] = [];
  async post(url: string, body: string, headers: Record<string, string>, timeoutMs: number) {
    this.calls.push({ url, body, headers, timeoutMs });
    // An answer takes a moment, so concurrent attempts really overlap.
    await Bun.sleep(1);
    const outcome = this.script.shift() ?? { error: 'the script ran out' };
    return { ...outcome, durationMs: 3.7 };
  }
}

interface DbReal {
  webhook: Webhook;
  deliveryId: string;
  body: string;
  sender: ScriptedSender;
}

interface DbModel extends Model {
  /** Every outcome recorded, in order (the delivery's history). */
  recorded: AttemptOutcome[];
  /** Jobs on the deliver queue for this delivery (retries and redeliveries). */
  jobs: number;
}

async function deliveryRow(id: string) {
  return database.db.selectFrom('webhook_deliveries').select(['state', 'attempts']).where('id', '=', id).executeTakeFirstOrThrow();
}

async function attemptRows(id: string) {
  return database.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('at').orderBy('attempt').execute();
}

/** The delivery's jobs on the deliver queue, newest first, with the wait each was given. */
async function deliverJobs(id: string) {
  const { rows } = await sql<{ delay: number; created_on: Date }>`
    select extract(epoch from start_after - created_on)::float8 as delay, created_on
    from pgboss.job where name = ${DELIVER_QUEUE} and data->>'deliveryId' = ${id}
    order by created_on desc`.execute(database.db);
  return rows.map((r) => ({ delay: Number(r.delay), createdOn: new Date(r.created_on) }));
}

/** The database agrees with the model, and the invariants hold on what it stores. */
async function verify(m: DbModel, r: DbReal): Promise<void> {
  const row = await deliveryRow(r.deliveryId);
  expect({ state: row.state, attempts: row.attempts }).toEqual({ state: m.state, attempts: m.attempts });
  expect(row.attempts).toBeLessThanOrEqual(3);
  const attempts = await attemptRows(r.deliveryId);
  expect(attempts.length).toBe(m.recorded.length);
  expect(attempts.map((a) => (a.status_code !== null ? { status: a.status_code } : { error: a.error! }))).toEqual(m.recorded);
  // At most one attempt ever succeeded (an event is never delivered twice as success).
  expect(attempts.filter((a) => a.status_code !== null && a.status_code < 400).length).toBeLessThanOrEqual(1);
  for (const a of attempts) {
    expect(a.duration_ms).toBe(4);
    expect(a.error === null).toBe(a.status_code !== null);
  }
  expect((await deliverJobs(r.deliveryId)).length).toBe(m.jobs);
}

/** Checks the request one attempt made. */
function checkRequest(r: DbReal, call: ScriptedSender['calls'][number], startedAt: number): void {
  expect(call.url).toBe(r.webhook.url);
  expect(call.body).toBe(r.body);
  expect(call.timeoutMs).toBe(10_000);
  expect(call.headers['x-switchboard-delivery']).toBe(r.deliveryId);
  expect(call.headers['x-switchboard-event']).toBe('messages.upsert');
  expect(call.headers['content-type']).toBe('application/json');
  if (r.webhook.hmacEnabled) {
    const timestamp = Number(call.headers[TIMESTAMP_HEADER]);
    expect(Math.abs(timestamp - Math.floor(startedAt / 1000))).toBeLessThanOrEqual(1);
    expect(call.headers[SIGNATURE_HEADER]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyDelivery(r.webhook.secret, call.body, { signature: call.headers[SIGNATURE_HEADER], timestamp: call.headers[TIMESTAMP_HEADER] }, timestamp)).toBe(true);
  } else {
    expect(call.headers[SIGNATURE_HEADER]).toBeUndefined();
    expect(call.headers[TIMESTAMP_HEADER]).toBeUndefined();
  }
}

/** After a failure with attempts left, the next attempt is a job that waits 5 s, then 10 s. */
async function checkRetryScheduled(r: DbReal, delay: number): Promise<void> {
  const [newest] = await deliverJobs(r.deliveryId);
  expect(newest).toBeDefined();
  expect(Math.abs(newest!.delay - delay)).toBeLessThan(0.01);
}

/** The scheduled job for this delivery runs: one attempt, the endpoint answering `outcome`. */
class ScheduledAttempt implements fc.AsyncCommand<DbModel, DbReal> {
  constructor(readonly outcome: AttemptOutcome) {}
  check = () => true;
  async run(m: DbModel, r: DbReal) {
    r.sender.calls = [];
    r.sender.script = [this.outcome];
    const startedAt = Date.now();
    const result = await attemptDelivery(messagingUnitOfWork(ctx), deps, r.sender, r.deliveryId);
    if (!modelMayAttempt(m)) {
      // SUCCEEDED or FAILED: nothing is sent, nothing recorded.
      expect(r.sender.calls).toEqual([]);
      expect(result).toBeUndefined();
    } else {
      expect(r.sender.calls.length).toBe(1);
      checkRequest(r, r.sender.calls[0]!, startedAt);
      const delay = modelAttempt(m, this.outcome);
      m.recorded.push(this.outcome);
      expect(result).toBe(m.state);
      if (delay !== null) {
        m.jobs += 1;
        await verify(m, r);
        await checkRetryScheduled(r, delay);
        return;
      }
    }
    checkModelInvariants(m);
    await verify(m, r);
  }
  toString = () => `scheduledAttempt(${describeOutcome(this.outcome)})`;
}

/**
 * The same job runs twice at once (a worker died mid-request and pg-boss handed the job to
 * another while the first still ran), the endpoint answering both the same way. One attempt
 * is recorded per outcome that lands first; the other request is discarded, or, if it began
 * after the first was recorded, is the next attempt. Never more than 3, never two successes.
 */
class DuplicateJob implements fc.AsyncCommand<DbModel, DbReal> {
  constructor(readonly outcome: AttemptOutcome) {}
  check = () => true;
  async run(m: DbModel, r: DbReal) {
    r.sender.calls = [];
    r.sender.script = [this.outcome, this.outcome];
    const before = m.attempts;
    const wasOpen = modelMayAttempt(m);
    await Promise.all([1, 2].map(() => attemptDelivery(messagingUnitOfWork(ctx), deps, r.sender, r.deliveryId)));
    const row = await deliveryRow(r.deliveryId);
    if (!wasOpen) {
      expect(r.sender.calls).toEqual([]);
    } else {
      // One or two attempts were recorded; the model follows, one attempt at a time.
      const recorded = row.attempts - before;
      expect(recorded === 1 || recorded === 2).toBe(true);
      expect(r.sender.calls.length).toBeGreaterThanOrEqual(recorded);
      expect(r.sender.calls.length).toBeLessThanOrEqual(2);
      for (let i = 0; i < recorded; i++) {
        expect(modelMayAttempt(m)).toBe(true);
        if (modelAttempt(m, this.outcome) !== null) m.jobs += 1;
        m.recorded.push(this.outcome);
      }
      // A success ends it at once: the second request, if sent after, found it settled.
      if (modelSucceeds(this.outcome)) expect(recorded).toBe(1);
    }
    checkModelInvariants(m);
    await verify(m, r);
  }
  toString = () => `duplicateJob(${describeOutcome(this.outcome)})`;
}

/** `POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliver`: only a FAILED delivery, a fresh round. */
class ManualRedelivery implements fc.AsyncCommand<DbModel, DbReal> {
  check = () => true;
  async run(m: DbModel, r: DbReal) {
    let error: unknown;
    try {
      const fresh = await messagingUnitOfWork(ctx).transaction((stores) => redeliverDelivery(stores, deps, actor, r.webhook.id, r.deliveryId));
      expect({ state: fresh.state, attempts: fresh.attempts }).toEqual({ state: 'PENDING', attempts: 0 });
    } catch (e) {
      error = e;
    }
    if (m.state === 'FAILED') {
      expect(error).toBeUndefined();
      m.state = 'PENDING';
      m.attempts = 0;
      m.jobs += 1;
      // The redelivery is due at once.
      const [newest] = await deliverJobs(r.deliveryId);
      expect(newest!.delay).toBeLessThan(0.01);
    } else {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).status).toBe(409);
    }
    await verify(m, r);
  }
  toString = () => 'manualRedelivery';
}

const dbCommands = [
  outcomeArb.map((o) => new ScheduledAttempt(o)),
  fc.constant(new ManualRedelivery()),
  outcomeArb.map((o) => new DuplicateJob(o)),
];

async function newDelivery(webhook: Webhook): Promise<DbReal> {
  const id = uuidV7.next();
  const keyId = `3EB0${crypto.randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase()}`;
  const body = JSON.stringify({
    event: 'messages.upsert',
    connectionId: uuidV7.next(),
    remoteJid: '5511988887777@s.whatsapp.net',
    sender: '15550100000',
    data: { key: { id: keyId, remoteJid: '5511988887777@s.whatsapp.net', fromMe: false }, pushName: 'Ana', status: 'DELIVERY_ACK', messageType: 'conversation', message: { conversation: 'olá' }, messageTimestamp: 1_763_900_000, source: 'android', isAiMessage: false },
  });
  const now = new Date();
  const inserted = await messagingUnitOfWork(ctx).transaction((stores) =>
    stores.deliveries.insert({ id, webhookId: webhook.id, target: 'connection', workspaceId: webhook.workspaceId, event: 'messages.upsert', eventIds: [uuidV7.next()], body, state: 'PENDING', attempts: 0, createdAt: now, updatedAt: now }),
  );
  expect(inserted).toBe(true);
  return { webhook, deliveryId: id, body, sender: new ScriptedSender() };
}

describe('webhook delivery: attemptDelivery on real stores with a scripted endpoint', () => {
  test('random endpoint behaviours, duplicated jobs and manual redeliveries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.commands(dbCommands, { maxCommands: 14 }), async (hmac, cmds) => {
        const real = await newDelivery(hmac ? signed : unsigned);
        const model: DbModel = { ...freshModel(), recorded: [], jobs: 0 };
        await fc.asyncModelRun(() => ({ model, real }), cmds);
      }),
      { numRuns: 40 },
    );
  });

  test('a delivery that fails three times, is redelivered and then succeeds keeps its whole history', async () => {
    const r = await newDelivery(signed);
    const m: DbModel = { ...freshModel(), recorded: [], jobs: 0 };
    for (const o of [{ status: 500 }, { error: `timeout after ${REQUEST_TIMEOUT_MS} ms` }, { status: 404 }, { status: 503 }, { status: 204 }, { status: 200 }]) {
      if (m.state === 'FAILED') await new ManualRedelivery().run(m, r);
      await new ScheduledAttempt(o).run(m, r);
    }
    expect(m).toMatchObject({ state: 'SUCCEEDED', attempts: 2, lifetimeAttempts: 5, successes: 1 });
    // The attempt log numbers every attempt of the delivery's life in order.
    expect((await attemptRows(r.deliveryId)).map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
  });

  test('an attempt of a delivery that does not exist sends nothing', async () => {
    const sender = new ScriptedSender();
    expect(await attemptDelivery(messagingUnitOfWork(ctx), deps, sender, uuidV7.next())).toBeUndefined();
    expect(await attemptDelivery(messagingUnitOfWork(ctx), deps, sender, 'not-a-uuid')).toBeUndefined();
    expect(sender.calls).toEqual([]);
  });
});
