import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { AppContext } from '../../adapters/http/context.ts';
import { messagingDeps, messagingStores } from '../../adapters/connections/stores.ts';
import { migrate } from '../../adapters/postgres/migrator.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { API_CHANNEL_DELIVER_QUEUE, attemptApiDelivery, type ApiChannelSender } from '../../core/helpdesk/api-channel/outbound.ts';
import { receiveApiMessage, receiveApiStatusUpdate, type ApiChannelStores } from '../../core/helpdesk/api-channel/inbound.ts';
import { sendHelpdeskMessage } from '../../core/helpdesk/conversations/helpdesk-messages.ts';
import { createInbox, type Inbox } from '../../core/helpdesk/inboxes/inboxes.ts';
import { DELIVERY_OUTCOMES, type DeliveryOutcomeStatus, type MessageStatus } from '../../core/helpdesk/conversations/message-status.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import type { Actor } from '../../core/identity/identity.ts';
import type { UnitOfWork } from '../../core/shared/unit-of-work.ts';
import type { AttemptOutcome } from '../../core/webhooks/delivery.ts';
import { helpdeskPlugin } from '../../plugins/helpdesk/index.ts';
import { apiChannelJobs } from '../../plugins/helpdesk/api-channel/jobs.ts';
import { helpdeskMessageStores } from '../../plugins/helpdesk/conversations/store.ts';
import { inboxStores, isTimeZone } from '../../plugins/helpdesk/inboxes/inbox-and-contact-stores.ts';
import { openTestContext, type TestContext } from '../support/context.ts';

/**
 * A reply's delivery on an API inbox, on real stores and the real queue, with a scripted app
 * standing in for the network: the job runs when the test says, sometimes twice at once (a
 * worker died mid-request and pg-boss handed the job out again), and the app reports statuses
 * in between. Whatever happens: at most 3 attempts counted, the retry jobs 5 s then 10 s out,
 * the reply's stored status forward only, one `helpdesk.message.status_changed` per change,
 * SENT on the first success, FAILED after the third failure, and the app's answered id
 * remembered and usable in status updates.
 */

let testContext: TestContext;
let ctx: AppContext;
let actor: Actor;
let inbox: Inbox;
let conversationId: string;
let uow: UnitOfWork<ApiChannelStores>;
const deps = () => ({ clock: ctx.clock, ids: ctx.ids });

beforeAll(async () => {
  testContext = await openTestContext();
  ctx = testContext.ctx;
  await migrate(ctx.db, [{ module: 'helpdesk', migrations: helpdeskPlugin.migrations! }]);
  await ctx.queue.declare(apiChannelJobs(ctx));
  uow = { transaction: (work) => ctx.db.transaction().execute((trx) => work(helpdeskMessageStores(trx, ctx))) };
  const owner = await ctx.db.transaction().execute((trx) =>
    bootstrapOwner(baseStores(trx), ctx, { email: `api-channel-${crypto.randomUUID().slice(0, 8)}@example.com`, workspace: 'API channel', plan: 'PRO' }),
  );
  actor = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] };
  inbox = await createInbox(inboxStores(ctx.db, ctx), { ...deps(), random: ctx.random, isTimeZone, outbound: ctx.outbound }, actor, { name: 'App', channelType: 'API', webhookUrl: 'http://app.invalid/in' });
  const pushed = await uow.transaction((s) => receiveApiMessage(s, deps(), inbox, { kind: 'message', sourceId: 'first', content: 'hello', sender: { name: 'Ana', email: 'ana@app.example', identifier: 'user-1' } }));
  conversationId = pushed.conversationId;
}, 60_000);

afterAll(async () => {
  await testContext?.close();
}, 60_000);

/** The app: answers each request with what the command scripted. */
class ScriptedApp implements ApiChannelSender {
  script: Array<AttemptOutcome & { answer?: string }> = [];
  calls: Array<{ url: string; body: string; headers: Record<string, string>; timeoutMs: number }> = [];
  async post(url: string, body: string, headers: Record<string, string>, timeoutMs: number) {
    this.calls.push({ url, body, headers, timeoutMs });
    // An answer takes a moment, so concurrent attempts really overlap.
    await Bun.sleep(1);
    return { ...(this.script.shift() ?? { error: 'the script ran out' }), durationMs: 2 };
  }
}

type Answer = 'none' | 'id' | 'garbage';
interface Model {
  status: MessageStatus;
  delivery: 'PENDING' | 'RETRYING' | 'SUCCEEDED' | 'FAILED';
  attempts: number;
  settled: boolean;
  appSourceId: string | null;
  emitted: MessageStatus[];
  /** Jobs queued for this reply: the first, and one per retry. */
  jobs: number;
}
interface Real {
  messageId: string;
  content: string;
  app: ScriptedApp;
}

const LADDER: MessageStatus[] = ['PENDING', 'SENT', 'DELIVERED', 'READ'];
const rank = (s: MessageStatus) => LADDER.indexOf(s);
const succeeds = (o: AttemptOutcome) => 'status' in o && o.status < 400;

function report(m: Model, to: DeliveryOutcomeStatus): void {
  if (m.status === 'FAILED') return;
  if (to === 'FAILED') {
    if (m.status === 'PENDING' || m.status === 'SENT') {
      m.status = 'FAILED';
      m.emitted.push('FAILED');
    }
  } else if (rank(to) > rank(m.status)) {
    m.status = to;
    m.emitted.push(to);
  }
}

/** One counted attempt in the model; the answered id when it succeeded with one. */
function attempt(m: Model, outcome: AttemptOutcome, appId: string | null): void {
  m.attempts += 1;
  if (succeeds(outcome)) {
    m.settled = true;
    m.delivery = 'SUCCEEDED';
    report(m, 'SENT');
    if (appId) m.appSourceId = appId;
  } else if (m.attempts === 3) {
    m.settled = true;
    m.delivery = 'FAILED';
    report(m, 'FAILED');
  } else {
    m.delivery = 'RETRYING';
    m.jobs += 1;
  }
}

function scripted(outcome: AttemptOutcome, answer: Answer): { reply: AttemptOutcome & { answer?: string }; appId: string | null } {
  const appId = answer === 'id' && succeeds(outcome) ? `app-${crypto.randomUUID()}` : null;
  const text = answer === 'id' ? JSON.stringify({ sourceId: appId ?? 'ignored' }) : answer === 'garbage' ? '<html>ok</html>' : undefined;
  return { reply: { ...outcome, ...(text !== undefined && { answer: text }) }, appId };
}

async function verify(m: Model, r: Real): Promise<void> {
  const db = ctx.db as any;
  const row = await db.selectFrom('helpdesk_api_messages').selectAll().where('message_id', '=', r.messageId).executeTakeFirstOrThrow();
  expect({ state: row.delivery_state, attempts: Number(row.attempts) }).toEqual({ state: m.delivery, attempts: m.attempts });
  expect(row.source_id).toBe(m.appSourceId);
  const message = await db.selectFrom('helpdesk_messages').select(['status', 'external_error']).where('id', '=', r.messageId).executeTakeFirstOrThrow();
  expect(message.status).toBe(m.status);
  expect(message.external_error !== null).toBe(m.status === 'FAILED');
  const events = await db.selectFrom('events').select('payload').where('event', '=', 'helpdesk.message.status_changed').orderBy('created_at').orderBy('id').execute();
  const mine = events.map((e: any) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload).data).filter((d: any) => d.messageId === r.messageId);
  expect(mine.map((d: any) => d.toStatus)).toEqual(m.emitted);
  const { rows } = await sql<{ delay: number }>`
    select extract(epoch from start_after - created_on)::float8 as delay from pgboss.job
    where name = ${API_CHANNEL_DELIVER_QUEUE} and data->>'messageId' = ${r.messageId} order by created_on`.execute(ctx.db);
  expect(rows.length).toBe(m.jobs);
  // The first job at once, then 5 s, then 10 s.
  rows.forEach((job, i) => expect(Math.abs(Number(job.delay) - [0, 5, 10][i]!)).toBeLessThan(0.5));
}

function checkRequests(r: Real): void {
  for (const call of r.app.calls) {
    expect(call.url).toBe('http://app.invalid/in');
    expect(call.timeoutMs).toBe(10_000);
    expect(call.headers['x-helpdesk-signature']).toBe(createHmac('sha256', inbox.inboundSecret!).update(call.body).digest('hex'));
    const body = JSON.parse(call.body);
    expect(body.data).toEqual({ sourceId: r.messageId, recipientIdentifier: 'user-1', content: r.content, attachments: [] });
  }
}

class Attempt implements fc.AsyncCommand<Model, Real> {
  constructor(readonly outcome: AttemptOutcome, readonly answer: Answer) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const { reply, appId } = scripted(this.outcome, this.answer);
    r.app.calls = [];
    r.app.script = [reply];
    await attemptApiDelivery(uow, deps(), r.app, r.messageId);
    expect(r.app.calls.length).toBe(m.settled ? 0 : 1);
    checkRequests(r);
    if (!m.settled) attempt(m, this.outcome, appId);
    await verify(m, r);
  }
  toString = () => `attempt(${'status' in this.outcome ? this.outcome.status : this.outcome.error}, ${this.answer})`;
}

/** The same job twice at once: one or two attempts counted (never more than the rules allow). */
class DuplicateJob implements fc.AsyncCommand<Model, Real> {
  constructor(readonly outcome: AttemptOutcome) {}
  check = () => true;
  async run(m: Model, r: Real) {
    r.app.calls = [];
    r.app.script = [this.outcome, this.outcome];
    const before = m.attempts;
    const wasOpen = !m.settled;
    await Promise.all([1, 2].map(() => attemptApiDelivery(uow, deps(), r.app, r.messageId)));
    checkRequests(r);
    const row = await (ctx.db as any).selectFrom('helpdesk_api_messages').select('attempts').where('message_id', '=', r.messageId).executeTakeFirstOrThrow();
    const counted = Number(row.attempts) - before;
    if (!wasOpen) {
      expect(r.app.calls).toEqual([]);
      expect(counted).toBe(0);
    } else {
      expect(counted === 1 || counted === 2).toBe(true);
      expect(r.app.calls.length).toBeGreaterThanOrEqual(counted);
      // A success ends it at once: the other request, if later, found it settled.
      if (succeeds(this.outcome)) expect(counted).toBe(1);
      for (let i = 0; i < counted; i++) attempt(m, this.outcome, null);
    }
    await verify(m, r);
  }
  toString = () => `duplicateJob(${'status' in this.outcome ? this.outcome.status : this.outcome.error})`;
}

/** The app reports a status, by its own id when it gave one (else by the reply's id). */
class Report implements fc.AsyncCommand<Model, Real> {
  constructor(readonly status: DeliveryOutcomeStatus) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const sourceId = m.appSourceId ?? r.messageId;
    const result = await uow.transaction((s) => receiveApiStatusUpdate(s, inbox, { kind: 'status_update', sourceId, status: this.status, error: this.status === 'FAILED' ? 'app: blocked' : null }));
    report(m, this.status);
    expect(result.status).toBe(m.status);
    await verify(m, r);
  }
  toString = () => `report(${this.status})`;
}

const outcomeArb: fc.Arbitrary<AttemptOutcome> = fc.oneof(
  fc.constantFrom(200, 202, 204, 400, 404, 500, 503).map((status) => ({ status })),
  fc.constant({ error: 'timeout after 10000 ms' }),
);

describe('a reply\'s delivery on real stores', () => {
  test('scheduled attempts, duplicated jobs and app reports in any order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands(
          [
            fc.tuple(outcomeArb, fc.constantFrom<Answer>('none', 'id', 'garbage')).map(([o, a]) => new Attempt(o, a)),
            outcomeArb.map((o) => new DuplicateJob(o)),
            fc.constantFrom<DeliveryOutcomeStatus>(...DELIVERY_OUTCOMES).map((s) => new Report(s)),
          ],
          { maxCommands: 8 },
        ),
        async (cmds) => {
          const setup = async () => {
            const content = `reply ${crypto.randomUUID().slice(0, 8)}`;
            const reply = await ctx.db.transaction().execute((trx) =>
              sendHelpdeskMessage(helpdeskMessageStores(trx, ctx), { stores: messagingStores(trx, ctx), deps: messagingDeps(ctx) }, deps(), actor, conversationId, { content }),
            );
            expect(reply.status).toBe('PENDING');
            return {
              model: { status: 'PENDING', delivery: 'PENDING', attempts: 0, settled: false, appSourceId: null, emitted: [], jobs: 1 } as Model,
              real: { messageId: reply.id, content, app: new ScriptedApp() } as Real,
            };
          };
          await fc.asyncModelRun(setup, cmds);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
