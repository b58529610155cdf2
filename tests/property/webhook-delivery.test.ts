import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
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
import { redeliverDelivery, type DispatchDeps, type WebhookSender } from '../../core/webhooks/dispatch.ts';
import { attemptClaimed, claimDue, LEASE_SECONDS, maySend, recordAttempts, type ClaimedDelivery, type EngineDeps } from '../../core/webhooks/delivery-engine.ts';
import { deliveryClaims } from '../../adapters/postgres/repositories/delivery-claims.ts';
import { deliveryEndpoints } from '../../adapters/webhooks/endpoints.ts';
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
// The delivery engine on real stores (claims, leases, batch recording), with a scripted sender
// standing in for the network and model clocks for domain time and wall-clock time
// ------------------------------------------------------------------------------------------

let database: TestDatabase;
let testContext: TestContext;
let ctx: AppContext;
let deps: DispatchDeps;
let actor: Actor;
let signed: Webhook;
let unsigned: Webhook;

/** Domain time (when deliveries are due) and wall-clock time (leases), moved by the commands. */
class ModelClock {
  constructor(public ms: number) {}
  now = () => new Date(this.ms);
}
const domain = new ModelClock(Date.UTC(2026, 10, 23, 12));
const wall = new ModelClock(Date.UTC(2026, 10, 23, 12));
const engine = (): EngineDeps => ({ clock: domain, wallClock: wall, ids: uuidV7 });

beforeAll(async () => {
  testContext = await openTestContext({ clock: domain });
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
  /** When the next attempt is due (domain ms), or null once settled. */
  dueAt: number | null;
  /** A claim that was never recorded (its worker died or stalled) holds it until then (wall ms). */
  heldUntil: number | null;
}

const claims = () => deliveryClaims(database.db);
const isDue = (m: DbModel) => modelMayAttempt(m) && m.dueAt !== null && m.dueAt <= domain.ms && (m.heldUntil === null || m.heldUntil < wall.ms);

/** A worker's claim: what the engine claims now (only this test's delivery is ever open). */
async function claimNow(): Promise<ClaimedDelivery[]> {
  return claimDue(claims(), engine(), 10);
}

/** A worker's attempt of a claimed delivery, to the endpoint the engine finds for it. */
async function attempt(r: DbReal, delivery: ClaimedDelivery) {
  const endpoint = (await deliveryEndpoints(database.db, ctx).findAll([delivery])).get(delivery.id);
  expect(endpoint).toBeDefined();
  expect(maySend(delivery, wall.now())).toBe(true);
  return attemptClaimed(r.sender, engine(), delivery, endpoint!);
}

async function deliveryRow(id: string) {
  return database.db.selectFrom('webhook_deliveries').select(['state', 'attempts', 'next_attempt_at', 'claim_id']).where('id', '=', id).executeTakeFirstOrThrow();
}

async function attemptRows(id: string) {
  return database.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('attempt').execute();
}

/** The database agrees with the model, and the invariants hold on what it stores. */
async function verify(m: DbModel, r: DbReal): Promise<void> {
  const row = await deliveryRow(r.deliveryId);
  expect({ state: row.state, attempts: row.attempts }).toEqual({ state: m.state, attempts: m.attempts });
  expect(row.next_attempt_at?.getTime() ?? null).toBe(m.dueAt);
  expect(row.attempts).toBeLessThanOrEqual(3);
  const attempts = await attemptRows(r.deliveryId);
  expect(attempts.map((a) => a.attempt)).toEqual(attempts.map((_, i) => i + 1));
  expect(attempts.map((a) => (a.status_code !== null ? { status: a.status_code } : { error: a.error! }))).toEqual(m.recorded);
  // At most one attempt ever succeeded (an event is never delivered twice as success).
  expect(attempts.filter((a) => a.status_code !== null && a.status_code < 400).length).toBeLessThanOrEqual(1);
  for (const a of attempts) {
    expect(a.duration_ms).toBe(4);
    expect(a.error === null).toBe(a.status_code !== null);
  }
}

/** Checks the request one attempt made. */
function checkRequest(r: DbReal, call: ScriptedSender['calls'][number]): void {
  expect(call.url).toBe(r.webhook.url);
  expect(call.body).toBe(r.body);
  expect(call.timeoutMs).toBe(10_000);
  expect(call.headers['x-switchboard-delivery']).toBe(r.deliveryId);
  expect(call.headers['x-switchboard-event']).toBe('messages.upsert');
  expect(call.headers['content-type']).toBe('application/json');
  if (r.webhook.hmacEnabled) {
    const timestamp = Number(call.headers[TIMESTAMP_HEADER]);
    expect(timestamp).toBe(Math.floor(domain.ms / 1000));
    expect(call.headers[SIGNATURE_HEADER]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyDelivery(r.webhook.secret, call.body, { signature: call.headers[SIGNATURE_HEADER], timestamp: call.headers[TIMESTAMP_HEADER] }, timestamp)).toBe(true);
  } else {
    expect(call.headers[SIGNATURE_HEADER]).toBeUndefined();
    expect(call.headers[TIMESTAMP_HEADER]).toBeUndefined();
  }
}

/** Applies a recorded attempt to the model: the next due time is now + 5 s, then 10 s. */
function modelRecord(m: DbModel, outcome: AttemptOutcome, attemptedAt = domain.ms): void {
  const delay = modelAttempt(m, outcome);
  m.recorded.push(outcome);
  m.dueAt = delay === null ? null : attemptedAt + delay * 1000;
  m.heldUntil = null;
}

/** A worker claims what is due, sends it, and records the outcome. */
class ClaimAndAttempt implements fc.AsyncCommand<DbModel, DbReal> {
  constructor(readonly outcome: AttemptOutcome) {}
  check = () => true;
  async run(m: DbModel, r: DbReal) {
    r.sender.calls = [];
    r.sender.script = [this.outcome];
    const claimed = await claimNow();
    if (!isDue(m)) {
      // Settled, not due yet (a retry waits 5 s, then 10 s), or held by another claim: nothing.
      expect(claimed).toEqual([]);
      await verify(m, r);
      return;
    }
    expect(claimed.map((d) => d.id)).toEqual([r.deliveryId]);
    expect((await deliveryRow(r.deliveryId)).claim_id).toBe(claimed[0]!.claimId);
    const record = await attempt(r, claimed[0]!);
    expect(r.sender.calls.length).toBe(1);
    checkRequest(r, r.sender.calls[0]!);
    expect([...(await recordAttempts(claims(), engine(), [record]))]).toEqual([r.deliveryId]);
    modelRecord(m, this.outcome);
    expect(record.next.state).toBe(m.state);
    checkModelInvariants(m);
    await verify(m, r);
    expect((await deliveryRow(r.deliveryId)).claim_id).toBeNull();
  }
  toString = () => `claimAndAttempt(${describeOutcome(this.outcome)})`;
}

/** Two workers claim at the same moment: at most one of them gets the delivery. */
class RacingClaims implements fc.AsyncCommand<DbModel, DbReal> {
  constructor(readonly outcome: AttemptOutcome) {}
  check = () => true;
  async run(m: DbModel, r: DbReal) {
    r.sender.calls = [];
    r.sender.script = [this.outcome];
    const [a, b] = await Promise.all([claimNow(), claimNow()]);
    const winners = [...a, ...b];
    expect(winners.length).toBe(isDue(m) ? 1 : 0);
    if (winners.length === 1) {
      await recordAttempts(claims(), engine(), [await attempt(r, winners[0]!)]);
      modelRecord(m, this.outcome);
    }
    checkModelInvariants(m);
    await verify(m, r);
  }
  toString = () => `racingClaims(${describeOutcome(this.outcome)})`;
}

/**
 * A worker claims and sends, then dies (or stalls) before recording. Nothing is recorded; no
 * other claim gets the delivery until the lease (30 s, wall clock) has passed. If the stalled
 * worker wakes up after another took the delivery over, its late outcome is not recorded.
 */
class WorkerDiesAfterSending implements fc.AsyncCommand<DbModel, DbReal> {
  constructor(readonly outcome: AttemptOutcome) {}
  check = () => true;
  async run(m: DbModel, r: DbReal) {
    r.sender.calls = [];
    r.sender.script = [this.outcome];
    const claimed = await claimNow();
    expect(claimed.length).toBe(isDue(m) ? 1 : 0);
    if (claimed.length === 1) {
      stalled.set(r.deliveryId, { record: await attempt(r, claimed[0]!), at: domain.ms });
      m.heldUntil = wall.ms + LEASE_SECONDS * 1000;
    }
    await verify(m, r);
  }
  toString = () => `workerDiesAfterSending(${describeOutcome(this.outcome)})`;
}

/** Attempts of workers that died or stalled before recording them, by delivery. */
const stalled = new Map<string, { record: Awaited<ReturnType<typeof attempt>>; at: number }>();

/** A stalled worker wakes and records its old attempt: only if no one took its claim over. */
class StalledWorkerRecords implements fc.AsyncCommand<DbModel, DbReal> {
  check = () => true;
  async run(m: DbModel, r: DbReal) {
    const late = stalled.get(r.deliveryId);
    if (!late) return;
    stalled.delete(r.deliveryId);
    const recorded = await recordAttempts(claims(), engine(), [late.record]);
    // Still its claim (no other worker claimed since, even if the lease lapsed): recorded, the
    // retry counted from when the attempt was made.
    const stillMine = m.heldUntil !== null;
    expect(recorded.has(r.deliveryId)).toBe(stillMine);
    if (stillMine) modelRecord(m, late.record.outcome, late.at);
    checkModelInvariants(m);
    await verify(m, r);
  }
  toString = () => 'stalledWorkerRecords';
}

/** Time passes: domain and wall clocks move on together. */
class PassTime implements fc.AsyncCommand<DbModel, DbReal> {
  constructor(readonly seconds: number) {}
  check = () => true;
  async run(m: DbModel, r: DbReal) {
    domain.ms += this.seconds * 1000;
    wall.ms += this.seconds * 1000;
    await verify(m, r);
  }
  toString = () => `passTime(${this.seconds} s)`;
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
      // The redelivery is due at once.
      m.dueAt = domain.ms;
    } else {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).kind).toBe('conflict');
    }
    await verify(m, r);
  }
  toString = () => 'manualRedelivery';
}

const dbCommands = [
  outcomeArb.map((o) => new ClaimAndAttempt(o)),
  outcomeArb.map((o) => new RacingClaims(o)),
  outcomeArb.map((o) => new WorkerDiesAfterSending(o)),
  fc.constant(new StalledWorkerRecords()),
  fc.constantFrom(1, 4, 5, 6, 10, 11, 29, 31).map((s) => new PassTime(s)),
  fc.constant(new ManualRedelivery()),
];

async function newDelivery(webhook: Webhook, options: { keepOthers?: boolean } = {}): Promise<DbReal> {
  // Only this delivery is open: earlier runs' deliveries are settled so no claim takes them.
  if (!options.keepOthers) await database.db.updateTable('webhook_deliveries').set({ next_attempt_at: null }).execute();
  stalled.clear();
  const id = uuidV7.next();
  const keyId = `3EB0${crypto.randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase()}`;
  const body = JSON.stringify({
    event: 'messages.upsert',
    connectionId: uuidV7.next(),
    remoteJid: '5511988887777@s.whatsapp.net',
    sender: '15550100000',
    data: { key: { id: keyId, remoteJid: '5511988887777@s.whatsapp.net', fromMe: false }, pushName: 'Ana', status: 'DELIVERY_ACK', messageType: 'conversation', message: { conversation: 'olá' }, messageTimestamp: 1_763_900_000, source: 'android', isAiMessage: false },
  });
  const now = domain.now();
  const inserted = await messagingUnitOfWork(ctx).transaction((stores) =>
    stores.deliveries.insert({ id, webhookId: webhook.id, target: 'connection', workspaceId: webhook.workspaceId, event: 'messages.upsert', eventIds: [uuidV7.next()], body, state: 'PENDING', attempts: 0, nextAttemptAt: now, createdAt: now, updatedAt: now }),
  );
  expect(inserted).toBe(true);
  return { webhook, deliveryId: id, body, sender: new ScriptedSender() };
}

const freshDbModel = (): DbModel => ({ ...freshModel(), recorded: [], dueAt: domain.ms, heldUntil: null });

describe('webhook delivery engine on real stores: claims, leases and batched recording', () => {
  test('random endpoint behaviours, racing workers, dying workers, time and manual redeliveries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.commands(dbCommands, { maxCommands: 16 }), async (hmac, cmds) => {
        const real = await newDelivery(hmac ? signed : unsigned);
        const model = freshDbModel();
        await fc.asyncModelRun(() => ({ model, real }), cmds);
      }),
      { numRuns: 40 },
    );
  });

  test('a delivery that fails three times, is redelivered and then succeeds keeps its whole history', async () => {
    const r = await newDelivery(signed);
    const m = freshDbModel();
    for (const o of [{ status: 500 }, { error: `timeout after ${REQUEST_TIMEOUT_MS} ms` }, { status: 404 }, { status: 503 }, { status: 204 }, { status: 200 }]) {
      if (m.state === 'FAILED') await new ManualRedelivery().run(m, r);
      if (m.dueAt !== null && m.dueAt > domain.ms) await new PassTime((m.dueAt - domain.ms) / 1000).run(m, r);
      await new ClaimAndAttempt(o).run(m, r);
    }
    expect(m).toMatchObject({ state: 'SUCCEEDED', attempts: 2, lifetimeAttempts: 5, successes: 1 });
    // The attempt log numbers every attempt of the delivery's life in order.
    expect((await attemptRows(r.deliveryId)).map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
  });

  test('a batch of attempts is recorded together; a claim another worker took over records nothing', async () => {
    await database.db.updateTable('webhook_deliveries').set({ next_attempt_at: null }).execute();
    const reals = await Promise.all(Array.from({ length: 5 }, () => newDeliveryKeepingOthers(signed)));
    const claimed = await claimNow();
    expect(claimed.map((d) => d.id).sort()).toEqual(reals.map((r) => r.deliveryId).sort());
    const records = await Promise.all(
      claimed.map((d, i) => {
        const r = reals.find((x) => x.deliveryId === d.id)!;
        r.sender.script = [i % 2 === 0 ? { status: 200 } : { status: 500 }];
        return attempt(r, d);
      }),
    );
    // The worker stalls past its lease; another worker takes one delivery over before the batch is written.
    wall.ms += (LEASE_SECONDS + 1) * 1000;
    const takenOver = await claimDue(claims(), engine(), 1);
    expect(takenOver.length).toBe(1);
    const recorded = await recordAttempts(claims(), engine(), records);
    // The others lapsed too, but no one took them: still this worker's claim, so recorded.
    expect([...recorded].sort()).toEqual(claimed.map((d) => d.id).filter((id) => id !== takenOver[0]!.id).sort());
    for (const r of reals) {
      const rows = await attemptRows(r.deliveryId);
      expect(rows.length).toBe(r.deliveryId === takenOver[0]!.id ? 0 : 1);
    }
    // The taken-over delivery is the other worker's to attempt; no one else gets it meanwhile.
    expect(await claimNow()).toEqual([]);
  });

  test('a worker without the lease to cover a request does not send', async () => {
    const r = await newDelivery(unsigned);
    const [claimed] = await claimNow();
    wall.ms += (LEASE_SECONDS - 10) * 1000;
    expect(maySend(claimed!, wall.now())).toBe(false);
    wall.ms += 11 * 1000;
    expect((await claimNow()).map((d) => d.id)).toEqual([r.deliveryId]);
  });
});

async function newDeliveryKeepingOthers(webhook: Webhook): Promise<DbReal> {
  return newDelivery(webhook, { keepOthers: true });
}
