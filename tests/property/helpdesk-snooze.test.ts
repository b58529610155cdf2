import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { changeConversationStatus, type Conversation, type ConversationStores, type HelpdeskMessage } from '../../core/helpdesk/conversations/conversations.ts';
import type { ConversationStatus } from '../../core/helpdesk/conversations/conversation-status.ts';
import { newConversation } from '../../core/helpdesk/conversations/conversation.ts';
import type { HelpdeskEvent } from '../../core/helpdesk/events.ts';
import { expireDueSnoozes, runSnoozeJob, snoozeJobOutcome, SnoozeNotDue, type SnoozeJob, type SnoozeStores } from '../../core/helpdesk/conversations/snooze.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { DomainError } from '../../core/shared/errors.ts';

/**
 * Snooze expiry jobs, model-based with a model clock.
 *
 * Spec 3.1: "an automatic change (for example a snooze expiring) carries `silent: true` and leaves
 * no activity message". Issue 6: "snooze expiry is automatic and `silent`"; the job of an earlier
 * snooze must do nothing once the conversation was reopened or snoozed again.
 *
 * The system is the real use cases (`changeConversationStatus`, which queues the job in its
 * transaction; `runSnoozeJob`; `expireDueSnoozes`) over in-memory ports, and a queue that keeps
 * jobs as pg-boss does: one per dedupe key (conversation and time), a job that throws stays
 * queued for a retry, a finished job is gone. The model is written from the words above:
 * - a conversation snoozed until T reopens at T, on its own, silently, with no actor and no
 *   activity line — unless something changed it first (reopened, resolved, snoozed to another time);
 * - whatever the agents do, a snoozed conversation always has a job waiting for its time.
 */

const NOW0 = Date.UTC(2025, 6, 1, 9, 0, 0);
const ACTOR: Actor = { userId: '00000000-0000-7000-8000-0000000000a1', workspaceId: '00000000-0000-7000-8000-0000000000e1', roles: ['OWNER'] };

interface Model {
  now: number;
  status: ConversationStatus;
  until: number | null;
  /** Expiries so far (each one silent `status_changed`). */
  expiries: number;
  /** Activity lines left by agents' changes. */
  activity: number;
}

interface Queued {
  job: SnoozeJob;
  dueAt: number;
}

class World {
  now = NOW0;
  conversation: Conversation;
  events: HelpdeskEvent[] = [];
  activity: HelpdeskMessage[] = [];
  queue = new Map<string, Queued>();
  finished = new Set<string>();
  private seq = 0;

  constructor() {
    const at = new Date(NOW0);
    this.conversation = {
      ...newConversation({
        id: '00000000-0000-7000-8000-0000000000c1',
        workspaceId: ACTOR.workspaceId,
        inboxId: '00000000-0000-7000-8000-0000000000b1',
        contactId: '00000000-0000-7000-8000-0000000000d1',
        status: 'OPEN',
        lastActivityAt: at,
        createdAt: at,
        updatedAt: at,
      }),
      displayId: 1,
    };
  }

  clock = { now: () => new Date(this.now) };
  ids = { next: () => `00000000-0000-7000-8000-${String(++this.seq).padStart(12, '0')}` };

  conversationStores(): ConversationStores {
    const world = this;
    return {
      conversations: {
        get: async (_workspaceId: string, id: string) => (id === world.conversation.id ? { ...world.conversation } : undefined),
        update: async (c: Conversation) => void (world.conversation = { ...c }),
      },
      messages: { insert: async (m: HelpdeskMessage) => (world.activity.push(m), true) },
      plans: { planOf: async () => 'PRO' },
      events: { record: async (e: HelpdeskEvent) => void world.events.push(e) },
      userName: async () => 'Ada',
      snoozes: {
        async schedule(job: SnoozeJob, dueAt: Date) {
          // pg-boss: the job id comes from the dedupe key; an insert with a known id does nothing.
          const key = `${job.conversationId}:${job.snoozedUntil}`;
          if (!world.queue.has(key) && !world.finished.has(key)) world.queue.set(key, { job, dueAt: dueAt.getTime() });
        },
      },
    } as unknown as ConversationStores;
  }

  snoozeStores(): SnoozeStores {
    const world = this;
    return {
      lock: async (_workspaceId, id) => (id === world.conversation.id ? { ...world.conversation } : undefined),
      lockDue: async (now) => (world.conversation.status === 'SNOOZED' && world.conversation.snoozedUntil!.getTime() <= now.getTime() ? [{ ...world.conversation }] : []),
      conversations: { update: async (c) => void (world.conversation = { ...c }) },
      events: { record: async (e) => void world.events.push(e) },
    };
  }

  /** Runs one queued job as the worker would: done unless it throws (then it stays for a retry). */
  async run(key: string): Promise<'expire' | 'wait' | 'stale'> {
    const { job } = this.queue.get(key)!;
    try {
      const outcome = await runSnoozeJob(this.snoozeStores(), this, job);
      this.queue.delete(key);
      this.finished.add(key);
      return outcome;
    } catch (error) {
      expect(error).toBeInstanceOf(SnoozeNotDue);
      return 'wait';
    }
  }
}

type Real = World;

function modelDue(m: Model): boolean {
  return m.status === 'SNOOZED' && m.until !== null && m.until <= m.now;
}

function expireInModel(m: Model): void {
  m.status = 'OPEN';
  m.until = null;
  m.expiries += 1;
}

function invariants(m: Model, r: Real): void {
  expect({ status: r.conversation.status, until: r.conversation.snoozedUntil?.getTime() ?? null }).toEqual({ status: m.status, until: m.until });
  // A snoozed conversation always has a job waiting for its own time: it cannot stay snoozed forever.
  if (m.status === 'SNOOZED') {
    const own = [...r.queue.values()].filter((q) => q.job.snoozedUntil === new Date(m.until!).toISOString());
    expect(own).toHaveLength(1);
    expect(own[0]!.dueAt).toBe(m.until!);
  }
  // Expiries are silent, carry no actor, and leave no activity line.
  const silent = r.events.filter((e) => e.type === 'helpdesk.conversation.status_changed' && e.silent === true);
  expect(silent).toHaveLength(m.expiries);
  for (const e of silent) expect(e).toMatchObject({ fromStatus: 'SNOOZED', toStatus: 'OPEN', actorUserId: null });
  expect(r.activity).toHaveLength(m.activity);
  // Agents' changes are never silent.
  for (const e of r.events.filter((x) => x.type === 'helpdesk.conversation.status_changed' && x.silent !== true)) expect(e.actorUserId).toBe(ACTOR.userId);
}

/** An agent asks for a status (`POST …/status`); the model says whether the table allows it. */
class Ask implements fc.Command<Model, Real> {
  constructor(
    readonly status: ConversationStatus,
    readonly offset: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const until = this.status === 'SNOOZED' ? new Date(m.now + this.offset) : undefined;
    const allowed =
      this.status === 'OPEN' ? m.status !== 'OPEN' : this.status === 'PENDING' ? m.status === 'OPEN' : this.status === 'RESOLVED' ? m.status !== 'RESOLVED' : m.status !== 'RESOLVED' && this.offset > 0;
    try {
      await changeConversationStatus(r.conversationStores(), r, ACTOR, r.conversation.id, { status: this.status, snoozedUntil: until?.toISOString() });
      expect(allowed).toBe(true);
      m.status = this.status;
      m.until = until ? until.getTime() : null;
      m.activity += 1;
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect(allowed).toBe(false);
    }
    invariants(m, r);
  }
  toString = () => `ask(${this.status}${this.status === 'SNOOZED' ? `, now+${this.offset}` : ''})`;
}

class AdvanceClock implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    m.now += this.ms;
    r.now += this.ms;
    invariants(m, r);
  }
  toString = () => `advance(${this.ms})`;
}

/** The queue hands out every job whose time has come (in any order); after it no snooze is overdue. */
class WorkerRuns implements fc.Command<Model, Real> {
  constructor(readonly reversed: boolean) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const due = [...r.queue.entries()].filter(([, q]) => q.dueAt <= r.now).map(([key]) => key);
    if (this.reversed) due.reverse();
    for (const key of due) {
      const expected = modelDue(m) ? 'expire' : 'stale';
      expect(await r.run(key)).toBe(expected);
      if (expected === 'expire') expireInModel(m);
    }
    expect(modelDue(m)).toBe(false);
    invariants(m, r);
  }
  toString = () => `worker(${this.reversed ? 'reversed' : 'in order'})`;
}

/** A job handed out before its time (clocks apart): it waits (retried later) or is stale; it never expires early. */
class EarlyJob implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const keys = [...r.queue.keys()];
    if (keys.length === 0) return;
    const key = keys[this.pick % keys.length]!;
    const { job } = r.queue.get(key)!;
    const own = m.status === 'SNOOZED' && new Date(m.until!).toISOString() === job.snoozedUntil;
    const expected = modelDue(m) ? 'expire' : own ? 'wait' : 'stale';
    expect(snoozeJobOutcome(r.conversation, new Date(job.snoozedUntil), new Date(r.now))).toBe(expected);
    expect(await r.run(key)).toBe(expected);
    if (expected === 'expire') expireInModel(m);
    invariants(m, r);
  }
  toString = () => `earlyJob(${this.pick})`;
}

/** The sweep another job runs: every overdue snooze expires, others stay. */
class Sweep implements fc.Command<Model, Real> {
  check = () => true;
  async run(m: Model, r: Real) {
    const due = modelDue(m);
    expect(await expireDueSnoozes(r.snoozeStores(), r)).toBe(due ? 1 : 0);
    if (due) expireInModel(m);
    invariants(m, r);
  }
  toString = () => 'sweep';
}

const commands = [
  fc.tuple(fc.constantFrom<ConversationStatus>('OPEN', 'PENDING', 'RESOLVED', 'SNOOZED'), fc.oneof(fc.integer({ min: -5_000, max: 0 }), fc.integer({ min: 1, max: 120_000 }))).map(([s, o]) => new Ask(s, o)),
  fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 180_000 })).map((ms) => new AdvanceClock(ms)),
  fc.boolean().map((r) => new WorkerRuns(r)),
  fc.nat().map((p) => new EarlyJob(p)),
  fc.constant(new Sweep()),
];

describe('snooze expiry jobs against the model', () => {
  test('random agents, clock and workers: snoozes end on time, silently, and stale jobs do nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 80 }), async (cmds) => {
        await fc.asyncModelRun(() => ({ model: { now: NOW0, status: 'OPEN', until: null, expiries: 0, activity: 0 } as Model, real: new World() }), cmds);
      }),
      { numRuns: 300 },
    );
  });

  test('a snooze left alone always ends: once the clock passes its time, the worker reopens it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 86_400_000 }), fc.integer({ min: 0, max: 10_000 }), async (offset, late) => {
        const world = new World();
        await changeConversationStatus(world.conversationStores(), world, ACTOR, world.conversation.id, { status: 'SNOOZED', snoozedUntil: new Date(NOW0 + offset).toISOString() });
        const [key] = [...world.queue.keys()];
        // Before its time: it waits.
        world.now = NOW0 + offset - 1;
        expect(await world.run(key!)).toBe('wait');
        expect(world.conversation.status).toBe('SNOOZED');
        world.now = NOW0 + offset + late;
        expect(await world.run(key!)).toBe('expire');
        expect(world.conversation).toMatchObject({ status: 'OPEN', snoozedUntil: null });
        // Nothing happened in the conversation: it keeps its place in the queue of work.
        expect(world.conversation.lastActivityAt.getTime()).toBe(NOW0);
        expect(world.activity).toHaveLength(1); // the snooze's own line only
        expect(world.queue.size).toBe(0);
      }),
    );
  });
});
