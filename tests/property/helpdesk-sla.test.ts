import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { ConversationStatus } from '../../core/helpdesk/conversations/conversation-status.ts';
import type { HelpdeskEvent } from '../../core/helpdesk/events.ts';
import { answerSituation, deadlineSituation, ROUND_TRANSITIONS, type ConversationTiming, type SlaPolicy, type SlaTarget } from '../../core/helpdesk/sla/sla.ts';
import {
  runSlaDeadline,
  SlaNotDue,
  sweepOverdueRounds,
  trackConversation,
  type SlaBreach,
  type SlaDeadlineJob,
  type SlaTrackingStores,
  type TrackOptions,
} from '../../core/helpdesk/sla/tracking.ts';
import { intlZoneRules } from '../../adapters/time/zone-rules.ts';

/**
 * SLA rounds (core/helpdesk/sla/sla.ts, sla/tracking.ts), model-based with a model clock.
 *
 * The system is the real tracker (`trackConversation` after each event, `runSlaDeadline` for
 * each deadline job, `sweepOverdueRounds`) over in-memory ports, with a queue that keeps jobs as
 * pg-boss does (one per dedupe key; a job that throws stays for a retry). The model is the
 * promise in plain words, with no due columns or rounds tables:
 * - the contact's first unanswered message must get a reply by a person or a bot within the
 *   first-response minutes, each later unanswered one within the next-response minutes; a
 *   resolve ends the wait; the helpdesk's own messages and private notes answer nothing;
 * - the conversation must be resolved within the resolution minutes of when it (re)opened;
 * - a policy put on the conversation starts its clocks from then; the previous one's stop;
 * - a promise is broken when the answer comes after its time, or when the worker runs at or
 *   after its time with no answer yet; each broken promise is recorded once, with one
 *   `helpdesk.sla.missed`, and nothing else is ever recorded.
 * Handling an earlier event again (a retried job) changes nothing. The clock is plain time (no
 * business hours): the business clock is checked against its own reference elsewhere.
 */

const MIN = 60_000;
const T0 = Date.UTC(2025, 2, 3, 12, 0, 0);
const WS = '00000000-0000-7000-8000-0000000000e1';
const CONV = '00000000-0000-7000-8000-0000000000c1';
const INBOX = '00000000-0000-7000-8000-0000000000b1';
type Sender = 'contact' | 'person' | 'bot' | 'helpdesk' | 'note';
interface Targets {
  firstResponseMinutes: number | null;
  nextResponseMinutes: number | null;
  resolutionMinutes: number | null;
}

interface Round {
  target: SlaTarget;
  due: number;
}

interface Model {
  now: number;
  policy: string | null;
  /** When the current policy was put on (clocks start no earlier). */
  appliedAt: number;
  status: 'OPEN' | 'RESOLVED';
  /** When it opened, or was last reopened. */
  openedAt: number;
  replied: boolean;
  /** The contact's earliest unanswered message. */
  waitingSince: number | null;
  response: Round | null;
  resolution: Round | null;
  broken: Set<string>;
}

const key = (target: SlaTarget, due: number) => `${target}@${new Date(due).toISOString()}`;

class World {
  now = T0;
  status: ConversationStatus = 'OPEN';
  messages: Array<{ sender: Sender; at: number }> = [];
  timing: ConversationTiming | undefined;
  breaches: SlaBreach[] = [];
  events: HelpdeskEvent[] = [];
  queue = new Map<string, { job: SlaDeadlineJob; dueAt: number }>();
  finished = new Set<string>();
  /** Every tracker call so far, to replay (a retried subscriber job). */
  triggers: TrackOptions[] = [];

  constructor(readonly policies: Map<string, SlaPolicy>, readonly inboxPolicy: string | null) {}

  clock = { now: () => new Date(this.now) };

  stores(): SlaTrackingStores {
    const world = this;
    const replies = () => world.messages.filter((m) => m.sender === 'person' || m.sender === 'bot').map((m) => m.at);
    const date = (ms: number | undefined) => (ms === undefined ? null : new Date(ms));
    return {
      conversation: async (_ws, id) => (id === CONV ? { id: CONV, workspaceId: WS, inboxId: INBOX, status: world.status, createdAt: new Date(T0) } : undefined),
      timing: {
        lock: async (fresh) => (world.timing ??= { ...fresh }),
        save: async (t) => void (world.timing = { ...t }),
      },
      messages: {
        firstReplyAt: async () => date(replies().sort((a, b) => a - b)[0]),
        lastReplyAt: async () => date(replies().sort((a, b) => b - a)[0]),
        firstReplyFrom: async (_id, from) => date(replies().filter((at) => at >= from.getTime()).sort((a, b) => a - b)[0]),
        firstIncomingAfter: async (_id, after) =>
          date(world.messages.filter((m) => m.sender === 'contact' && (after === null || m.at > after.getTime())).map((m) => m.at).sort((a, b) => a - b)[0]),
      },
      policies: {
        get: async (_ws, id) => world.policies.get(id),
        forInbox: async () => (world.inboxPolicy === null ? undefined : world.policies.get(world.inboxPolicy)),
      },
      calendar: async () => null,
      breaches: {
        async insert(b) {
          if (world.breaches.some((x) => x.target === b.target && x.dueAt.getTime() === b.dueAt.getTime())) return false;
          world.breaches.push(b);
          return true;
        },
      },
      async overdueRounds(now) {
        const t = world.timing;
        if (!t) return [];
        const rounds: Array<[SlaTarget, Date | null]> = [
          ['first_response', t.firstResponseDueAt],
          ['next_response', t.nextResponseDueAt],
          ['resolution', t.resolutionDueAt],
        ];
        return rounds
          .filter(([target, due]) => due !== null && due <= now && !world.breaches.some((b) => b.target === target && b.dueAt.getTime() === due.getTime()))
          .map(([target, due]) => ({ workspaceId: WS, conversationId: CONV, target, dueAt: due!.toISOString() }));
      },
      deadlines: {
        async schedule(job, dueAt) {
          // pg-boss: the job id comes from the dedupe key; an insert with a known id does nothing.
          const id = `${job.conversationId}:${job.target}:${job.dueAt}`;
          if (!world.queue.has(id) && !world.finished.has(id)) world.queue.set(id, { job, dueAt: dueAt.getTime() });
        },
      },
      events: { record: async (e) => void world.events.push(e) },
    };
  }

  deps = { clock: this.clock, zones: intlZoneRules };

  async track(options: TrackOptions = {}): Promise<void> {
    this.triggers.push(options);
    await trackConversation(this.stores(), this.deps, WS, CONV, options);
  }
}

type Real = World;

function invariants(m: Model, r: Real): void {
  const t = r.timing!;
  const due = (round: Round | null, target: SlaTarget) => (round?.target === target ? new Date(round.due).toISOString() : null);
  expect({
    policy: t.policyId,
    first: t.firstResponseDueAt?.toISOString() ?? null,
    next: t.nextResponseDueAt?.toISOString() ?? null,
    resolution: t.resolutionDueAt?.toISOString() ?? null,
    waitingSince: t.waitingSince?.getTime() ?? null,
  }).toEqual({
    policy: m.policy,
    first: due(m.response, 'first_response'),
    next: due(m.response, 'next_response'),
    resolution: due(m.resolution, 'resolution'),
    waitingSince: m.waitingSince,
  });
  expect(new Set(r.breaches.map((b) => key(b.target, b.dueAt.getTime())))).toEqual(m.broken);
  expect(r.breaches).toHaveLength(m.broken.size);
  const missed = r.events.filter((e) => e.type === 'helpdesk.sla.missed');
  expect(missed).toHaveLength(r.breaches.length);
  for (const e of missed) expect(e).toMatchObject({ accountId: WS, conversationId: CONV, inboxId: INBOX });
  // Every running round has its deadline job waiting.
  for (const round of [m.response, m.resolution]) {
    if (round && !m.broken.has(key(round.target, round.due))) expect([...r.queue.values()].some((q) => q.job.target === round.target && q.dueAt === round.due)).toBe(true);
  }
}

/** A round ends with an answer at `at`: broken if late. */
function end(m: Model, round: Round | null, at: number): null {
  if (round && at > round.due) m.broken.add(key(round.target, round.due));
  return null;
}

function minutesOf(policies: Map<string, SlaPolicy>, m: Model, target: SlaTarget): number | null {
  const p = m.policy === null ? undefined : policies.get(m.policy);
  if (!p) return null;
  return target === 'first_response' ? p.firstResponseMinutes : target === 'next_response' ? p.nextResponseMinutes : p.resolutionMinutes;
}

function startResponse(policies: Map<string, SlaPolicy>, m: Model): void {
  if (m.waitingSince === null || m.status === 'RESOLVED') return;
  const target: SlaTarget = m.replied ? 'next_response' : 'first_response';
  const minutes = minutesOf(policies, m, target);
  m.response = minutes === null ? null : { target, due: Math.max(m.waitingSince, m.appliedAt) + minutes * MIN };
}

function startResolution(policies: Map<string, SlaPolicy>, m: Model, openedAt: number): void {
  const minutes = minutesOf(policies, m, 'resolution');
  m.resolution = minutes === null || m.status === 'RESOLVED' ? null : { target: 'resolution', due: Math.max(openedAt, m.appliedAt) + minutes * MIN };
}

/** Someone writes on the conversation (every command moves the clock a second first: no two things at once). */
class Writes implements fc.Command<Model, Real> {
  constructor(readonly sender: Sender) {}
  check = (m: Readonly<Model>) => this.sender !== 'contact' || m.status !== 'RESOLVED';
  async run(m: Model, r: Real) {
    m.now += 1000;
    r.now = m.now;
    r.messages.push({ sender: this.sender, at: m.now });
    if (this.sender === 'contact' && m.waitingSince === null) {
      m.waitingSince = m.now;
      startResponse(r.policies, m);
    }
    if (this.sender === 'person' || this.sender === 'bot') {
      m.response = end(m, m.response, m.now);
      m.waitingSince = null;
      m.replied = true;
    }
    await r.track({ at: new Date(m.now) });
    invariants(m, r);
  }
  toString = () => `writes(${this.sender})`;
}

class Resolve implements fc.Command<Model, Real> {
  check = (m: Readonly<Model>) => m.status === 'OPEN';
  async run(m: Model, r: Real) {
    m.now += 1000;
    r.now = m.now;
    r.status = m.status = 'RESOLVED';
    m.response = end(m, m.response, m.now);
    m.resolution = end(m, m.resolution, m.now);
    m.waitingSince = null;
    await r.track({ at: new Date(m.now), status: { fromStatus: 'OPEN', toStatus: 'RESOLVED', at: new Date(m.now) } });
    invariants(m, r);
  }
  toString = () => 'resolve';
}

class Reopen implements fc.Command<Model, Real> {
  check = (m: Readonly<Model>) => m.status === 'RESOLVED';
  async run(m: Model, r: Real) {
    m.now += 1000;
    r.now = m.now;
    r.status = m.status = 'OPEN';
    m.openedAt = m.now;
    startResolution(r.policies, m, m.openedAt);
    await r.track({ at: new Date(m.now), status: { fromStatus: 'RESOLVED', toStatus: 'OPEN', at: new Date(m.now) } });
    invariants(m, r);
  }
  toString = () => 'reopen';
}

/** A manager puts a policy (or none) on the conversation: clocks restart from now under it. */
class ApplyPolicy implements fc.Command<Model, Real> {
  constructor(readonly policy: string | null) {}
  check = () => true;
  async run(m: Model, r: Real) {
    m.now += 1000;
    r.now = m.now;
    if (this.policy !== m.policy) {
      m.policy = this.policy;
      m.appliedAt = m.now;
      m.response = null;
      startResponse(r.policies, m);
      startResolution(r.policies, m, m.openedAt);
    }
    await r.track({ policyId: this.policy });
    invariants(m, r);
  }
  toString = () => `apply(${this.policy})`;
}

class Advance implements fc.Command<Model, Real> {
  constructor(readonly minutes: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    m.now += this.minutes * MIN;
    r.now = m.now;
    invariants(m, r);
  }
  toString = () => `advance(${this.minutes} min)`;
}

/** The worker runs every job whose time has come, then the sweep: every running round past due is broken. */
class WorkerRuns implements fc.Command<Model, Real> {
  check = () => true;
  async run(m: Model, r: Real) {
    for (const [id, { job, dueAt }] of [...r.queue.entries()]) {
      if (dueAt > r.now) continue;
      await runSlaDeadline(r.stores(), r.deps, job);
      r.queue.delete(id);
      r.finished.add(id);
    }
    await sweepOverdueRounds(r.stores(), r.deps);
    for (const round of [m.response, m.resolution]) if (round && round.due <= m.now) m.broken.add(key(round.target, round.due));
    invariants(m, r);
  }
  toString = () => 'worker';
}

/** A job handed out before its time (clocks apart): it is retried (SlaNotDue) or stale; it never breaks a promise early. */
class EarlyJob implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const early = [...r.queue.values()].filter((q) => q.dueAt > r.now);
    if (early.length === 0) return;
    const { job } = early[this.pick % early.length]!;
    const running = [m.response, m.resolution].some((round) => round?.target === job.target && new Date(round.due).toISOString() === job.dueAt);
    try {
      expect(await runSlaDeadline(r.stores(), r.deps, job)).toBe('stale');
      expect(running).toBe(false);
    } catch (error) {
      expect(error).toBeInstanceOf(SlaNotDue);
      expect(running).toBe(true);
    }
    invariants(m, r);
  }
  toString = () => `earlyJob(${this.pick})`;
}

/** A subscriber job retried: an earlier event handled again changes nothing. */
class Replay implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const trigger = r.triggers[this.pick % r.triggers.length]!;
    // A replayed policy change is the same policy again; a replayed event keeps its own time.
    await trackConversation(r.stores(), r.deps, WS, CONV, trigger.policyId !== undefined ? { policyId: r.timing!.policyId } : trigger);
    invariants(m, r);
  }
  toString = () => `replay(${this.pick})`;
}

const targets = fc.record<Targets>({
  firstResponseMinutes: fc.option(fc.integer({ min: 1, max: 90 }), { freq: 4 }),
  nextResponseMinutes: fc.option(fc.integer({ min: 1, max: 90 }), { freq: 4 }),
  resolutionMinutes: fc.option(fc.integer({ min: 1, max: 300 }), { freq: 4 }),
});

function policy(id: string, t: Targets): SlaPolicy {
  return { id, workspaceId: WS, name: id, description: null, ...t, onlyBusinessHours: false, inboxIds: [], createdAt: new Date(T0), updatedAt: new Date(T0) };
}

const commands = [
  fc.constantFrom<Sender>('contact', 'contact', 'person', 'bot', 'helpdesk', 'note').map((s) => new Writes(s)),
  fc.constant(new Resolve()),
  fc.constant(new Reopen()),
  fc.constantFrom('p1', 'p2', null).map((p) => new ApplyPolicy(p)),
  fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 120 })).map((n) => new Advance(n)),
  fc.constant(new WorkerRuns()),
  fc.nat().map((p) => new EarlyJob(p)),
  fc.nat().map((p) => new Replay(p)),
];

describe('SLA rounds against the model', () => {
  test('random conversations, replies, resolves, policies, clock and workers: each broken promise is recorded once, nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(targets, targets, fc.boolean(), fc.commands(commands, { maxCommands: 80, size: 'large' }), async (t1, t2, inboxHasPolicy, cmds) => {
        const policies = new Map([
          ['p1', policy('p1', t1)],
          ['p2', policy('p2', t2)],
        ]);
        const real = new World(policies, inboxHasPolicy ? 'p1' : null);
        const model: Model = { now: T0, policy: inboxHasPolicy ? 'p1' : null, appliedAt: T0, status: 'OPEN', openedAt: T0, replied: false, waitingSince: T0, response: null, resolution: null, broken: new Set() };
        startResponse(policies, model);
        startResolution(policies, model, T0);
        // The conversation opens with the contact's first message (conversation.created, message.created).
        real.messages.push({ sender: 'contact', at: T0 });
        await real.track({ at: new Date(T0) });
        await real.track({ at: new Date(T0) });
        invariants(model, real);
        await fc.asyncModelRun(() => ({ model, real }), cmds);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the round transition table', () => {
  test('an answer at or before the due time meets it; after, misses it; a deadline job misses it only from its time on', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 10_000 }), (due, at) => {
        const answer = ROUND_TRANSITIONS[answerSituation(new Date(due), new Date(at))];
        expect(answer).toEqual({ running: false, verdict: at <= due ? 'met' : 'missed' });
        const deadline = ROUND_TRANSITIONS[deadlineSituation(new Date(due), new Date(at))];
        expect(deadline).toEqual({ running: true, verdict: at >= due ? 'missed' : null });
      }),
    );
  });
});
