import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  applyConversationEvent,
  canTransition,
  CONVERSATION_EVENT_TYPES,
  CONVERSATION_STATUSES,
  CONVERSATION_TRANSITIONS,
  conversationActivityText,
  snoozeDue,
  transition,
  type ConversationEvent,
  type ConversationEventType,
  type ConversationStatus,
  type ConversationStatusState,
} from '../../core/helpdesk/conversations/conversation-status.ts';
import { DomainError } from '../../core/shared/errors.ts';

/**
 * The conversation status machine.
 *
 * Spec 3.1: "States: `OPEN`, `PENDING`, `SNOOZED`, `RESOLVED`. Transitions: not shown (which
 * operation moves which state to which is not stated). Known facts: someone may resolve, reopen
 * or snooze a conversation, and this emits `helpdesk.conversation.status_changed` with
 * `fromStatus`, `toStatus`, `actorUserId`; an automatic change (for example a snooze expiring)
 * carries `silent: true` and leaves no activity message. A new conversation is created with
 * status `OPEN` in the sample event."
 * Spec 2.11: the conversation has `status` and `snoozedUntil`.
 * Issue 6: "status machine OPEN/PENDING/SNOOZED/RESOLVED as an explicit transition table (design
 * the transitions as users of shared inboxes expect: resolve, reopen, snooze until a time,
 * pending; a new incoming message reopens a resolved or snoozed conversation; snooze expiry is
 * automatic and `silent`)"; Tests: "conversation status machine (model-based, with a model clock
 * for snoozes)".
 *
 * The model is written from those words, not from the table:
 * - resolve: anything not already resolved becomes RESOLVED;
 * - reopen: anything not already open becomes OPEN;
 * - snooze: an open or pending conversation (or a snoozed one, to move the time) becomes SNOOZED
 *   until a time strictly in the future; a resolved one cannot be snoozed;
 * - pending: only an open conversation;
 * - a customer message always leaves the conversation OPEN;
 * - a snooze that is due expires to OPEN, silently; nothing else expires.
 */

const NOW0 = Date.UTC(2025, 5, 1, 12, 0, 0);
const ACTOR = 'Ada Agent';

type Expected = { to: ConversationStatus; until: number | null; silent: boolean } | 'refused' | 'bad';

function modelNext(status: ConversationStatus, snoozedUntil: number | null, type: ConversationEventType, now: number, until?: number): Expected {
  switch (type) {
    case 'resolve':
      return status === 'RESOLVED' ? 'refused' : { to: 'RESOLVED', until: null, silent: false };
    case 'reopen':
      return status === 'OPEN' ? 'refused' : { to: 'OPEN', until: null, silent: false };
    case 'snooze':
      if (until === undefined || until <= now) return 'bad';
      return status === 'RESOLVED' ? 'refused' : { to: 'SNOOZED', until, silent: false };
    case 'pending':
      return status === 'OPEN' ? { to: 'PENDING', until: null, silent: false } : 'refused';
    case 'incomingMessage':
      // Spec 3.1, our choice (issue 20, item 17): a message after RESOLVED opens a new conversation instead.
      return status === 'RESOLVED' ? 'refused' : { to: 'OPEN', until: null, silent: false };
    case 'snoozeExpired':
      return status === 'SNOOZED' && snoozedUntil !== null && snoozedUntil <= now ? { to: 'OPEN', until: null, silent: true } : 'refused';
  }
}

function eventOf(type: ConversationEventType, until?: number): ConversationEvent {
  return type === 'snooze' ? { type, until: new Date(until ?? 0) } : ({ type } as ConversationEvent);
}

describe('the transition table against the documented meaning', () => {
  test('every (status, event) pair: table, canTransition and transition agree with the model', () => {
    expect([...CONVERSATION_STATUSES].sort()).toEqual(['OPEN', 'PENDING', 'RESOLVED', 'SNOOZED']);
    const now = NOW0;
    for (const from of CONVERSATION_STATUSES) {
      for (const type of CONVERSATION_EVENT_TYPES) {
        // A snoozed conversation whose time is due, so the table row is exercised.
        const snoozedUntil = from === 'SNOOZED' ? now - 1 : null;
        const until = now + 60_000;
        const expected = modelNext(from, snoozedUntil, type, now, until);
        const result = transition({ status: from, snoozedUntil: snoozedUntil === null ? null : new Date(snoozedUntil) }, eventOf(type, until), new Date(now));
        if (expected === 'refused') {
          expect({ from, type, to: CONVERSATION_TRANSITIONS[from][type] }).toEqual({ from, type, to: undefined });
          expect(canTransition(from, type)).toBe(false);
          expect(result).toBeInstanceOf(DomainError);
          expect((result as DomainError).kind).toBe('unprocessable');
          // The refusal names the from-status and the event.
          expect((result as DomainError).message).toContain(from);
          expect((result as DomainError).message).toContain(type);
        } else if (expected !== 'bad') {
          expect({ from, type, to: CONVERSATION_TRANSITIONS[from][type] }).toEqual({ from, type, to: expected.to });
          expect(canTransition(from, type)).toBe(true);
          expect(result).not.toBeInstanceOf(DomainError);
          expect(result).toEqual({
            status: expected.to,
            snoozedUntil: expected.until === null ? null : new Date(expected.until),
            changed: expected.to !== from,
            silent: expected.silent,
          });
        }
      }
    }
  });

  test('snooze needs a time strictly after now: 400 otherwise, in every status', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CONVERSATION_STATUSES), fc.integer({ min: -10_000_000, max: 0 }), (status, offset) => {
        const state: ConversationStatusState = { status, snoozedUntil: status === 'SNOOZED' ? new Date(NOW0 + 1000) : null };
        const result = transition(state, { type: 'snooze', until: new Date(NOW0 + offset) }, new Date(NOW0));
        expect(result).toBeInstanceOf(DomainError);
        expect((result as DomainError).kind).toBe('invalid_input');
        expect(() => applyConversationEvent(state, { type: 'snooze', until: new Date(NOW0 + offset) }, new Date(NOW0))).toThrow(DomainError);
      }),
    );
    const invalid = transition({ status: 'OPEN', snoozedUntil: null }, { type: 'snooze', until: new Date(Number.NaN) }, new Date(NOW0));
    expect((invalid as DomainError).kind).toBe('invalid_input');
  });

  test('a new conversation is OPEN and a customer message keeps it OPEN without a change (spec 3.1 sample event)', () => {
    const result = applyConversationEvent({ status: 'OPEN', snoozedUntil: null }, { type: 'incomingMessage' }, new Date(NOW0));
    expect(result).toEqual({ status: 'OPEN', snoozedUntil: null, changed: false, silent: false });
    expect(conversationActivityText({ type: 'incomingMessage' }, result, null)).toBeNull();
  });
});

// ------------------------------------------------------------------------------------------
// Model-based: random commands with a model clock and an automatic expiry check.
// ------------------------------------------------------------------------------------------

interface Model {
  now: number;
  status: ConversationStatus;
  snoozedUntil: number | null;
}

interface Real {
  now: Date;
  state: ConversationStatusState;
  /** Every activity message left so far. */
  activity: string[];
}

function snapshot(state: ConversationStatusState): { status: ConversationStatus; until: number | null } {
  return { status: state.status, until: state.snoozedUntil === null ? null : state.snoozedUntil.getTime() };
}

/** Applies one event to the real machine and to the model, and checks they agree. */
function step(m: Model, r: Real, event: ConversationEvent): void {
  const expected = modelNext(m.status, m.snoozedUntil, event.type, m.now, event.type === 'snooze' ? event.until.getTime() : undefined);
  const before = snapshot(r.state);
  const activityBefore = r.activity.length;
  const result = transition(r.state, event, r.now);
  // transition is pure: the conversation passed in is never modified.
  expect(snapshot(r.state)).toEqual(before);
  if (expected === 'refused' || expected === 'bad') {
    expect(result).toBeInstanceOf(DomainError);
    expect((result as DomainError).kind).toBe(expected === 'bad' ? 'invalid_input' : 'unprocessable');
    if (expected === 'refused') expect((result as DomainError).message).toContain(`${m.status}`);
    // A refused transition changes nothing (the model stays as it was).
  } else {
    expect(result).not.toBeInstanceOf(DomainError);
    const change = result as Exclude<typeof result, DomainError>;
    expect(change.status).toBe(expected.to);
    expect(change.snoozedUntil === null ? null : change.snoozedUntil.getTime()).toBe(expected.until);
    expect(change.changed).toBe(expected.to !== m.status);
    expect(change.silent).toBe(expected.silent);
    const text = conversationActivityText(event, change, ACTOR);
    if (change.silent) expect(text).toBeNull(); // spec 3.1: "leaves no activity message"
    else if (change.changed || event.type === 'snooze') {
      expect(text).not.toBeNull();
      if (event.type !== 'incomingMessage') expect(text).toContain(ACTOR);
    } else expect(text).toBeNull();
    if (text !== null) r.activity.push(text);
    r.state = { status: change.status, snoozedUntil: change.snoozedUntil };
    m.status = expected.to;
    m.snoozedUntil = expected.until;
  }
  if (expected === 'refused' || expected === 'bad') expect(r.activity.length).toBe(activityBefore);
  invariants(m, r);
}

function invariants(m: Model, r: Real): void {
  // The status is always one of the four.
  expect(CONVERSATION_STATUSES).toContain(r.state.status);
  // SNOOZED iff snoozedUntil is set.
  expect(r.state.status === 'SNOOZED').toBe(r.state.snoozedUntil !== null);
  expect(snapshot(r.state)).toEqual({ status: m.status, until: m.snoozedUntil });
  expect(r.now.getTime()).toBe(m.now);
  expect(snoozeDue(r.state, r.now)).toBe(m.status === 'SNOOZED' && m.snoozedUntil !== null && m.snoozedUntil <= m.now);
}

class Act implements fc.Command<Model, Real> {
  constructor(readonly type: 'resolve' | 'reopen' | 'pending' | 'incomingMessage') {}
  check = () => true;
  run(m: Model, r: Real) {
    step(m, r, { type: this.type });
  }
  toString = () => this.type;
}

class Snooze implements fc.Command<Model, Real> {
  /** `offset` from the model's now; zero or negative offsets must be refused with 400. */
  constructor(readonly offset: number) {}
  check = () => true;
  run(m: Model, r: Real) {
    step(m, r, { type: 'snooze', until: new Date(m.now + this.offset) });
  }
  toString = () => `snooze(now${this.offset >= 0 ? '+' : ''}${this.offset})`;
}

/** The automatic check (the worker's expiry job): fires only when a snooze is due. */
function automaticExpiry(m: Model, r: Real): void {
  if (!snoozeDue(r.state, r.now)) return;
  const wasSnoozed = m.status === 'SNOOZED';
  step(m, r, { type: 'snoozeExpired' });
  // An expired snooze always becomes OPEN with silent = true.
  expect(wasSnoozed).toBe(true);
  expect(r.state).toEqual({ status: 'OPEN', snoozedUntil: null });
}

class AdvanceClock implements fc.Command<Model, Real> {
  /** `workerRuns` false models a worker that has not looked yet (the snooze stays due for now). */
  constructor(readonly ms: number, readonly workerRuns: boolean) {}
  check = () => true;
  run(m: Model, r: Real) {
    m.now += this.ms;
    r.now = new Date(r.now.getTime() + this.ms);
    invariants(m, r);
    if (this.workerRuns) {
      automaticExpiry(m, r);
      // After the check no snooze is left overdue.
      expect(snoozeDue(r.state, r.now)).toBe(false);
    }
  }
  toString = () => `advance(${this.ms}${this.workerRuns ? '' : ', worker idle'})`;
}

/** A (possibly stale) expiry job: due ones expire silently, others are refused and change nothing. */
class ExpiryJob implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real) {
    const due = m.status === 'SNOOZED' && m.snoozedUntil !== null && m.snoozedUntil <= m.now;
    step(m, r, { type: 'snoozeExpired' });
    if (due) expect(r.state).toEqual({ status: 'OPEN', snoozedUntil: null });
  }
  toString = () => 'expiryJob';
}

const commands = [
  fc.constantFrom('resolve', 'reopen', 'pending', 'incomingMessage').map((t) => new Act(t as Act['type'])),
  fc.oneof(fc.integer({ min: -60_000, max: 0 }), fc.integer({ min: 1, max: 3_600_000 })).map((o) => new Snooze(o)),
  fc.tuple(fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 7_200_000 })), fc.boolean()).map(([ms, w]) => new AdvanceClock(ms, w)),
  fc.constant(new ExpiryJob()),
];

describe('random commands against the model, with a model clock', () => {
  test('the machine follows the model; invariants hold after every command', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CONVERSATION_STATUSES), fc.commands(commands, { maxCommands: 100 }), (start, cmds) => {
        const until = start === 'SNOOZED' ? NOW0 + 30 * 60_000 : null;
        fc.modelRun(
          () => ({
            model: { now: NOW0, status: start, snoozedUntil: until },
            real: { now: new Date(NOW0), state: { status: start, snoozedUntil: until === null ? null : new Date(until) }, activity: [] },
          }),
          cmds,
        );
      }),
      { numRuns: 500 },
    );
  });

  test('a snooze always ends: once its time passes, the automatic check reopens it silently', () => {
    fc.assert(
      fc.property(fc.constantFrom('OPEN', 'PENDING', 'SNOOZED'), fc.integer({ min: 1, max: 86_400_000 }), fc.integer({ min: 0, max: 1000 }), (status, offset, late) => {
        const now = new Date(NOW0);
        const state: ConversationStatusState = { status: status as ConversationStatus, snoozedUntil: status === 'SNOOZED' ? new Date(NOW0 + 5) : null };
        const snoozed = applyConversationEvent(state, { type: 'snooze', until: new Date(NOW0 + offset) }, now);
        expect(snoozed.status).toBe('SNOOZED');
        expect(snoozed.snoozedUntil?.getTime()).toBe(NOW0 + offset);
        expect(snoozed.changed).toBe(status !== 'SNOOZED');
        // Not yet due one millisecond before.
        const early = new Date(NOW0 + offset - 1);
        expect(snoozeDue(snoozed, early)).toBe(false);
        expect((transition(snoozed, { type: 'snoozeExpired' }, early) as DomainError).kind).toBe('unprocessable');
        const later = new Date(NOW0 + offset + late);
        expect(snoozeDue(snoozed, later)).toBe(true);
        const expired = applyConversationEvent(snoozed, { type: 'snoozeExpired' }, later);
        expect(expired).toEqual({ status: 'OPEN', snoozedUntil: null, changed: true, silent: true });
        expect(conversationActivityText({ type: 'snoozeExpired' }, expired, ACTOR)).toBeNull();
      }),
    );
  });

  test('activity texts name the actor ("Conversation was resolved by {actor}")', () => {
    const now = new Date(NOW0);
    const open = { status: 'OPEN' as const, snoozedUntil: null };
    const resolved = applyConversationEvent(open, { type: 'resolve' }, now);
    expect(conversationActivityText({ type: 'resolve' }, resolved, ACTOR)).toBe(`Conversation was resolved by ${ACTOR}`);
    const reopened = applyConversationEvent(resolved, { type: 'reopen' }, now);
    expect(conversationActivityText({ type: 'reopen' }, reopened, ACTOR)).toBe(`Conversation was reopened by ${ACTOR}`);
    const pending = applyConversationEvent(reopened, { type: 'pending' }, now);
    expect(conversationActivityText({ type: 'pending' }, pending, ACTOR)).toBe(`Conversation was marked as pending by ${ACTOR}`);
    const until = new Date(NOW0 + 3_600_000);
    const snoozed = applyConversationEvent(pending, { type: 'snooze', until }, now);
    expect(conversationActivityText({ type: 'snooze', until }, snoozed, ACTOR)).toBe(`Conversation was snoozed by ${ACTOR} until ${until.toISOString()}`);
    const byMessage = applyConversationEvent(snoozed, { type: 'incomingMessage' }, now);
    expect(byMessage).toEqual({ status: 'OPEN', snoozedUntil: null, changed: true, silent: false });
    expect(conversationActivityText({ type: 'incomingMessage' }, byMessage, null)).toBe('Conversation was reopened by a new message from the contact');
  });
});
