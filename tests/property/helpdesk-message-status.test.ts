import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  applyDeliveryOutcome,
  DELIVERY_OUTCOMES,
  isTerminal,
  MESSAGE_STATUS_TRANSITIONS,
  MESSAGE_STATUSES,
  UNKNOWN_EXTERNAL_ERROR,
  type DeliveryOutcome,
  type DeliveryOutcomeStatus,
  type MessageDeliveryState,
  type MessageStatus,
} from '../../core/helpdesk/conversations/message-status.ts';

/**
 * Helpdesk message delivery status.
 *
 * Spec 2.12: "`status` (`PENDING`, `SENT`, `DELIVERED`, `READ`, `FAILED`), `externalError`
 * (explanation when `FAILED`). A send through REST returns immediately with `status: PENDING`;
 * delivery is asynchronous."
 * Spec 3.2: "| (created by REST send) | send call | always | `PENDING` | REST returns at once. |"
 * and "| `PENDING` | delivery outcome | asynchronous | `SENT`, `DELIVERED`, `READ` or `FAILED` |
 * Emits `helpdesk.message.status_changed` with `messageId`, `toStatus`, `externalError` (set on
 * `FAILED`). |" — "Moves among `SENT`, `DELIVERED`, `READ` beyond this are not stated."
 * Issue 6: "returns `PENDING` at once, status moves asynchronously to `SENT`/`DELIVERED`/`READ`/
 * `FAILED` with `externalError`".
 *
 * Our design (core/helpdesk/conversations/message-status.ts), modelled here in words, not by the table:
 * progress is a ladder PENDING < SENT < DELIVERED < READ that is only climbed; a late or repeated
 * outcome is ignored (not an error); FAILED is possible only before the message reached the phone
 * (PENDING or SENT) and is terminal; `externalError` is set exactly on FAILED.
 */

const LADDER: MessageStatus[] = ['PENDING', 'SENT', 'DELIVERED', 'READ'];
const rank = (s: MessageStatus) => LADDER.indexOf(s);

function modelNext(from: MessageStatus, outcome: DeliveryOutcomeStatus): MessageStatus {
  if (from === 'FAILED') return 'FAILED';
  if (outcome === 'FAILED') return from === 'PENDING' || from === 'SENT' ? 'FAILED' : from;
  return rank(outcome) > rank(from) ? outcome : from;
}

describe('the transition table against the documented meaning', () => {
  test('every (status, outcome) pair agrees with the model; FAILED and READ are terminal', () => {
    expect([...MESSAGE_STATUSES].sort()).toEqual(['DELIVERED', 'FAILED', 'PENDING', 'READ', 'SENT']);
    // Spec 3.2: from PENDING any of SENT, DELIVERED, READ or FAILED.
    expect([...MESSAGE_STATUS_TRANSITIONS.PENDING].sort()).toEqual(['DELIVERED', 'FAILED', 'READ', 'SENT']);
    for (const from of MESSAGE_STATUSES) {
      for (const outcome of DELIVERY_OUTCOMES) {
        const to = modelNext(from, outcome);
        expect({ from, outcome, moves: MESSAGE_STATUS_TRANSITIONS[from].includes(outcome) }).toEqual({ from, outcome, moves: to !== from });
        const state: MessageDeliveryState = { status: from, externalError: from === 'FAILED' ? 'boom' : null };
        const result = applyDeliveryOutcome(state, { status: outcome, externalError: 'provider said no' });
        expect(result.status).toBe(to);
        expect(result.changed).toBe(to !== from);
      }
      expect(isTerminal(from)).toBe(from === 'FAILED' || from === 'READ');
    }
  });

  test('FAILED carries the provider explanation, or a default when none is given', () => {
    expect(applyDeliveryOutcome({ status: 'PENDING', externalError: null }, { status: 'FAILED', externalError: '  (#131047) Re-engagement message  ' })).toEqual({
      status: 'FAILED',
      externalError: '(#131047) Re-engagement message',
      changed: true,
    });
    for (const missing of [undefined, null, '', '   ']) {
      expect(applyDeliveryOutcome({ status: 'SENT', externalError: null }, { status: 'FAILED', externalError: missing })).toEqual({
        status: 'FAILED',
        externalError: UNKNOWN_EXTERNAL_ERROR,
        changed: true,
      });
    }
    // An explanation that comes with a non-failure is dropped.
    expect(applyDeliveryOutcome({ status: 'PENDING', externalError: null }, { status: 'READ', externalError: 'noise' })).toEqual({
      status: 'READ',
      externalError: null,
      changed: true,
    });
  });
});

// ------------------------------------------------------------------------------------------
// Model-based: random (late, repeated, out-of-order) outcome sequences on one message.
// ------------------------------------------------------------------------------------------

interface Model {
  status: MessageStatus;
  /** The `toStatus` of every `helpdesk.message.status_changed` emitted so far. */
  emitted: MessageStatus[];
}

interface Real {
  state: MessageDeliveryState;
  emitted: Array<{ toStatus: MessageStatus; externalError: string | null }>;
}

class Outcome implements fc.Command<Model, Real> {
  constructor(readonly outcome: DeliveryOutcome) {}
  check = () => true;
  run(m: Model, r: Real) {
    const before = r.state.status;
    const result = applyDeliveryOutcome(r.state, this.outcome);
    const expected = modelNext(m.status, this.outcome.status);
    expect(result.status).toBe(expected);
    expect(result.changed).toBe(expected !== m.status);
    if (result.changed) {
      r.emitted.push({ toStatus: result.status, externalError: result.externalError });
      m.emitted.push(expected);
    }
    r.state = { status: result.status, externalError: result.externalError };
    m.status = expected;

    // Never backwards: along the ladder the rank never drops.
    if (result.status !== 'FAILED') expect(rank(result.status)).toBeGreaterThanOrEqual(rank(before));
    // FAILED is terminal.
    if (before === 'FAILED') {
      expect(result.status).toBe('FAILED');
      expect(result.changed).toBe(false);
    }
    // externalError only (and always) on FAILED.
    expect(r.state.externalError !== null).toBe(r.state.status === 'FAILED');
    if (r.state.status === 'FAILED') expect(r.state.externalError!.length).toBeGreaterThan(0);
    // The events emitted climb strictly; FAILED, if any, is the last one.
    expect(r.emitted.map((e) => e.toStatus)).toEqual(m.emitted);
    const ladder = r.emitted.filter((e) => e.toStatus !== 'FAILED').map((e) => rank(e.toStatus));
    for (let i = 1; i < ladder.length; i++) expect(ladder[i]!).toBeGreaterThan(ladder[i - 1]!);
    const failed = r.emitted.findIndex((e) => e.toStatus === 'FAILED');
    if (failed >= 0) expect(failed).toBe(r.emitted.length - 1);
    for (const e of r.emitted) expect(e.externalError !== null).toBe(e.toStatus === 'FAILED');
  }
  toString = () => `${this.outcome.status}${this.outcome.externalError !== undefined ? `(${JSON.stringify(this.outcome.externalError)})` : ''}`;
}

const outcomeArb = fc
  .record(
    {
      status: fc.constantFrom<DeliveryOutcomeStatus>(...DELIVERY_OUTCOMES),
      externalError: fc.option(fc.oneof(fc.constant(''), fc.string({ maxLength: 40 })), { nil: undefined }),
    },
    { requiredKeys: ['status'] },
  )
  .map((o) => new Outcome(o as DeliveryOutcome));

describe('random outcome sequences', () => {
  test('never backwards, FAILED terminal, externalError only on FAILED (starting from PENDING, spec 3.2)', () => {
    fc.assert(
      fc.property(fc.commands([outcomeArb], { maxCommands: 40 }), (cmds) => {
        fc.modelRun(() => ({ model: { status: 'PENDING', emitted: [] } as Model, real: { state: { status: 'PENDING', externalError: null }, emitted: [] } as Real }), cmds);
      }),
      { numRuns: 1000 },
    );
  });

  test('the final status depends only on the best outcome seen, not on the order (unless FAILED came first)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<DeliveryOutcomeStatus>('SENT', 'DELIVERED', 'READ'), { minLength: 1, maxLength: 20 }), (outcomes) => {
        const run = (list: DeliveryOutcomeStatus[]) =>
          list.reduce<MessageDeliveryState>((s, o) => {
            const r = applyDeliveryOutcome(s, { status: o });
            return { status: r.status, externalError: r.externalError };
          }, { status: 'PENDING', externalError: null }).status;
        const best = outcomes.reduce((a, b) => (rank(b) > rank(a) ? b : a));
        expect(run(outcomes)).toBe(best);
        expect(run([...outcomes].reverse())).toBe(best);
      }),
    );
  });
});
