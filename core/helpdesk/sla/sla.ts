import type { ConversationStatus } from '../conversations/conversation-status.ts';

/**
 * SLA rules (issue 7 item 2): what a conversation is promised and when each promise is due.
 * Pure; the use cases that keep a conversation's timing are in tracking.ts.
 *
 * A policy sets up to three targets, in business minutes of the inbox (business-hours.ts), or in
 * plain minutes when `onlyBusinessHours` is false:
 * - `first_response`: the contact's first unanswered message gets a reply by a person or a bot
 *   (an automatic message of the helpdesk itself, an out-of-office reply or a survey link, is no
 *   reply; neither is a private note);
 * - `next_response`: after that first reply, each new unanswered message gets one;
 * - `resolution`: the conversation is resolved, counted from when it opened (or was reopened).
 *
 * A target runs in rounds. A response round starts when a contact message is waiting (the
 * earliest message after the last reply and the last resolve) and ends at the first reply at or
 * after it, or when the conversation is resolved; a resolution round starts when the
 * conversation (re)opens and ends when it is resolved. A policy applies from `appliedAt`: a round
 * never starts earlier (a chat's imported history, or a conversation that waited before a
 * policy was put on it, is not measured backwards). A round's due time is fixed when it starts.
 *
 * A round, as an explicit transition table (`ROUND_TRANSITIONS`):
 *
 * | situation of a running round (due D)                  | still running | verdict  |
 * |-------------------------------------------------------|---------------|----------|
 * | `answered` at or before D (reply, or resolve)         | no            | `met`    |
 * | `answeredLate`: after D                               | no            | `missed` |
 * | `deadline`: the clock reaches D, nothing answered     | yes           | `missed` |
 * | `early`: a deadline job runs before D (clock skew)    | yes           | none (the job retries) |
 * | `superseded`: its start moved or the policy changed   | no            | none (a new round starts) |
 *
 * A `missed` verdict is one breach per (conversation, target, due time): found by the deadline
 * job at D, or by the reply that came late, whichever is first; the other finds it recorded.
 */

export const SLA_TARGETS = ['first_response', 'next_response', 'resolution'] as const;
export type SlaTarget = (typeof SLA_TARGETS)[number];

/** Targets go up to a year of business time. */
export const MAX_TARGET_MINUTES = 525_600;

export interface SlaTargets {
  firstResponseMinutes: number | null;
  nextResponseMinutes: number | null;
  resolutionMinutes: number | null;
  /** True: the clock runs only in the inbox's business hours; false: around the clock. */
  onlyBusinessHours: boolean;
}

export interface SlaPolicy extends SlaTargets {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  /** The inboxes whose new conversations get this policy (an inbox has at most one). */
  inboxIds: string[];
  createdAt: Date;
  updatedAt: Date;
}

/**
 * What the helpdesk keeps about a conversation's timing (table `helpdesk_conversation_timing`);
 * also the figures reports read. The due times are those of running rounds (null: not running).
 */
export interface ConversationTiming {
  conversationId: string;
  workspaceId: string;
  inboxId: string;
  /** The SLA policy of the conversation; null: none. */
  policyId: string | null;
  /** When the policy (or the absence of one) was put on the conversation; rounds start no earlier. */
  appliedAt: Date;
  /** The first public reply by a person or a bot. */
  firstReplyAt: Date | null;
  /** When the contact's earliest unanswered message arrived; null when nothing waits. */
  waitingSince: Date | null;
  /** The latest time the conversation was resolved (kept if reopened: its status tells). */
  resolvedAt: Date | null;
  /** The latest time it was reopened after a resolve. */
  reopenedAt: Date | null;
  firstResponseDueAt: Date | null;
  nextResponseDueAt: Date | null;
  resolutionDueAt: Date | null;
  updatedAt: Date;
}

export type RoundSituation = 'answered' | 'answeredLate' | 'deadline' | 'early' | 'superseded';
export type Verdict = 'met' | 'missed';

export const ROUND_TRANSITIONS: Readonly<Record<RoundSituation, { running: boolean; verdict: Verdict | null }>> = {
  answered: { running: false, verdict: 'met' },
  answeredLate: { running: false, verdict: 'missed' },
  deadline: { running: true, verdict: 'missed' },
  early: { running: true, verdict: null },
  superseded: { running: false, verdict: null },
};

/** How a running round due at `due` ends with an answer at `at`. */
export function answerSituation(due: Date, at: Date): RoundSituation {
  return at.getTime() <= due.getTime() ? 'answered' : 'answeredLate';
}

/** What a deadline job finds when it runs at `now` for a round still running with due `due`. */
export function deadlineSituation(due: Date, now: Date): RoundSituation {
  return now.getTime() >= due.getTime() ? 'deadline' : 'early';
}

export function dueColumn(target: SlaTarget): 'firstResponseDueAt' | 'nextResponseDueAt' | 'resolutionDueAt' {
  return target === 'first_response' ? 'firstResponseDueAt' : target === 'next_response' ? 'nextResponseDueAt' : 'resolutionDueAt';
}

function targetMinutes(policy: SlaTargets | null, target: SlaTarget): number | null {
  if (!policy) return null;
  return target === 'first_response' ? policy.firstResponseMinutes : target === 'next_response' ? policy.nextResponseMinutes : policy.resolutionMinutes;
}

/** What the conversation looks like now, read by the use case (tracking.ts). */
export interface SlaFacts {
  status: ConversationStatus;
  createdAt: Date;
  firstReplyAt: Date | null;
  /** The earliest contact message after the last reply and the last resolve. */
  waitingSince: Date | null;
  /** The first reply at or after the stored `waitingSince` (how the stored response round ended). */
  answeredAt: Date | null;
}

export interface SlaPlanInput {
  /** The timing as stored, with `resolvedAt`/`reopenedAt`/`policyId`/`appliedAt` already brought up to date. */
  stored: ConversationTiming;
  updated: Pick<ConversationTiming, 'policyId' | 'appliedAt' | 'resolvedAt' | 'reopenedAt'>;
  policy: SlaTargets | null;
  facts: SlaFacts;
  now: Date;
  /** `start` plus `minutes` of the policy's clock (business time or plain); null when never reached. */
  dueAfter(start: Date, minutes: number): Date | null;
}

export interface SlaPlan {
  timing: ConversationTiming;
  /** Rounds that ended after their due time (a breach each). */
  missed: Array<{ target: SlaTarget; dueAt: Date }>;
  /** Rounds that started: a deadline job each. */
  started: Array<{ target: SlaTarget; dueAt: Date }>;
}

const later = (a: Date, b: Date | null) => (b !== null && b.getTime() > a.getTime() ? b : a);
const same = (a: Date | null, b: Date | null) => (a === null ? b === null : b !== null && a.getTime() === b.getTime());

/**
 * The timing after what happened: each target's round continues, ends (with its verdict) or
 * starts. Deterministic in its input, so running it again changes nothing (subscribers and jobs
 * may run twice), and it reads the conversation as it is, so events handled out of order
 * reach the same timing.
 */
export function planSla(input: SlaPlanInput): SlaPlan {
  const { stored, updated, policy, facts, now } = input;
  const policyChanged = updated.policyId !== stored.policyId || !same(updated.appliedAt, stored.appliedAt);
  const resolved = facts.status === 'RESOLVED';
  const timing: ConversationTiming = {
    ...stored,
    ...updated,
    firstReplyAt: facts.firstReplyAt,
    waitingSince: facts.waitingSince,
    firstResponseDueAt: null,
    nextResponseDueAt: null,
    resolutionDueAt: null,
    updatedAt: now,
  };
  const missed: SlaPlan['missed'] = [];
  const started: SlaPlan['started'] = [];

  // A resolve heard of only through the status (its event not handled yet) ends rounds now.
  const resolvedAtOrNow = (since: Date) => (updated.resolvedAt !== null && updated.resolvedAt.getTime() >= since.getTime() ? updated.resolvedAt : resolved ? now : null);

  // Response rounds: one wait at a time, first_response until the first reply, next_response after.
  const kind: SlaTarget = facts.firstReplyAt === null ? 'first_response' : 'next_response';
  const minutes = targetMinutes(policy, kind);
  if (!resolved && facts.waitingSince !== null && minutes !== null) {
    const continues = stored[dueColumn(kind)] !== null && same(stored.waitingSince, facts.waitingSince) && !policyChanged;
    timing[dueColumn(kind)] = continues ? stored[dueColumn(kind)] : input.dueAfter(later(facts.waitingSince, updated.appliedAt), minutes);
  }
  for (const target of ['first_response', 'next_response'] as const) {
    const due = stored[dueColumn(target)];
    if (due === null || same(due, timing[dueColumn(target)])) continue;
    const end = facts.answeredAt ?? (stored.waitingSince && resolvedAtOrNow(stored.waitingSince));
    if (end && ROUND_TRANSITIONS[answerSituation(due, end)].verdict === 'missed') missed.push({ target, dueAt: due });
  }

  // The resolution round, from the (re)opening.
  const openedAt = (t: Pick<ConversationTiming, 'appliedAt' | 'reopenedAt'>) => later(later(facts.createdAt, t.reopenedAt), t.appliedAt);
  const resolutionMinutes = targetMinutes(policy, 'resolution');
  if (!resolved && resolutionMinutes !== null) {
    const continues = stored.resolutionDueAt !== null && same(openedAt(stored), openedAt(updated)) && !policyChanged;
    timing.resolutionDueAt = continues ? stored.resolutionDueAt : input.dueAfter(openedAt(updated), resolutionMinutes);
  }
  if (stored.resolutionDueAt !== null && !same(stored.resolutionDueAt, timing.resolutionDueAt)) {
    const end = resolvedAtOrNow(openedAt(stored));
    if (end && ROUND_TRANSITIONS[answerSituation(stored.resolutionDueAt, end)].verdict === 'missed') missed.push({ target: 'resolution', dueAt: stored.resolutionDueAt });
  }

  for (const target of SLA_TARGETS) {
    const due = timing[dueColumn(target)];
    if (due !== null && !same(due, stored[dueColumn(target)])) started.push({ target, dueAt: due });
  }
  return { timing, missed, started };
}
