import type { Clock } from '../../shared/ports.ts';
import { addBusinessMinutes, type BusinessCalendar, type ZoneRules } from './business-hours.ts';
import type { ConversationStatus } from '../conversations/conversation-status.ts';
import { slaMissed, type HelpdeskEventLog } from '../events.ts';
import {
  deadlineSituation,
  dueColumn,
  planSla,
  ROUND_TRANSITIONS,
  type ConversationTiming,
  type SlaPolicy,
  type SlaTarget,
} from './sla.ts';

/**
 * Keeping a conversation's timing and SLA rounds (sla.ts) as things happen, run by the worker:
 * after each `helpdesk.conversation.created`, `helpdesk.message.created` and
 * `helpdesk.conversation.status_changed` (subscribers), and by the deadline job of each running
 * round. Every run locks the conversation's timing row, reads the conversation as it is now and
 * plans (`planSla`): idempotent, and the same whatever order events are handled in.
 *
 * A round that starts queues its deadline job in the same transaction (the outbox), keyed on
 * the conversation, the target and the due time (queued twice: one job). At its time the job
 * brings the timing up to date and, if that round is still running, records the breach: a row
 * of `helpdesk_sla_breaches` (unique per conversation, target and due time) and the event
 * `helpdesk.sla.missed` (webhooks only, never the websocket: spec 6.7). A job whose round ended
 * or moved (answered, resolved, policy changed) does nothing. Each job then sweeps a few running
 * rounds past due with no breach recorded (`sweepOverdueRounds`), which catches a round whose
 * job was lost (it exhausted its retries while the database was away).
 */

export const SLA_DEADLINE_QUEUE = 'helpdesk.sla-deadline';
/** How many overdue rounds one deadline job sweeps besides its own. */
export const SLA_SWEEP_LIMIT = 50;

export interface SlaDeadlineJob {
  workspaceId: string;
  conversationId: string;
  target: SlaTarget;
  /** ISO time of the round's due time (a round that moved makes the job stale). */
  dueAt: string;
}

export interface SlaBreach {
  conversationId: string;
  workspaceId: string;
  inboxId: string;
  policyId: string | null;
  target: SlaTarget;
  dueAt: Date;
  /** When the service found it (the deadline job, or the late reply). */
  breachedAt: Date;
}

/** The conversation as the tracker reads it. */
export interface TrackedConversation {
  id: string;
  workspaceId: string;
  inboxId: string;
  status: ConversationStatus;
  createdAt: Date;
}

export interface SlaTrackingStores {
  conversation(workspaceId: string, id: string): Promise<TrackedConversation | undefined>;
  timing: {
    /** The conversation's timing row, locked until the transaction ends; `fresh` is inserted first when there is none. */
    lock(fresh: ConversationTiming): Promise<ConversationTiming>;
    save(timing: ConversationTiming): Promise<void>;
  };
  /** Public replies by a person or a bot, and contact messages, of the conversation. */
  messages: {
    firstReplyAt(conversationId: string): Promise<Date | null>;
    lastReplyAt(conversationId: string): Promise<Date | null>;
    /** The first reply at or after `from`. */
    firstReplyFrom(conversationId: string, from: Date): Promise<Date | null>;
    /** The earliest contact message strictly after `after` (any, when null). */
    firstIncomingAfter(conversationId: string, after: Date | null): Promise<Date | null>;
  };
  policies: {
    get(workspaceId: string, id: string): Promise<SlaPolicy | undefined>;
    /** The policy new conversations of the inbox get. */
    forInbox(inboxId: string): Promise<SlaPolicy | undefined>;
  };
  /** The inbox's business calendar; null when it has no business hours (open 24/7). */
  calendar(inboxId: string): Promise<BusinessCalendar | null>;
  breaches: {
    /** False when this breach (conversation, target, due time) is already recorded. */
    insert(breach: SlaBreach): Promise<boolean>;
  };
  /** Running rounds past their due time with no breach recorded (their job was lost), up to `limit`. */
  overdueRounds(now: Date, limit: number): Promise<SlaDeadlineJob[]>;
  /** Queues a round's deadline job in the caller's transaction (the outbox). */
  deadlines: { schedule(job: SlaDeadlineJob, dueAt: Date): Promise<void> };
  events: HelpdeskEventLog;
}

export interface SlaDeps {
  clock: Clock;
  zones: ZoneRules;
}

/** A status change the tracker is told of (from `helpdesk.conversation.status_changed`), at the time it was recorded. */
export interface StatusChange {
  fromStatus: string;
  toStatus: string;
  at: Date;
}

/** Thrown when a deadline job runs before its due time: the queue retries it. */
export class SlaNotDue extends Error {
  constructor(readonly dueAt: Date) {
    super(`the SLA round is due at ${dueAt.toISOString()}`);
    this.name = 'SlaNotDue';
  }
}

const latest = (a: Date | null, b: Date) => (a === null || b.getTime() > a.getTime() ? b : a);

/** A timing row for a conversation first seen now: the inbox's policy, applied at `at`. */
export function freshTiming(conversation: TrackedConversation, policyId: string | null, at: Date): ConversationTiming {
  return {
    conversationId: conversation.id,
    workspaceId: conversation.workspaceId,
    inboxId: conversation.inboxId,
    policyId,
    appliedAt: at,
    firstReplyAt: null,
    waitingSince: null,
    resolvedAt: null,
    reopenedAt: null,
    firstResponseDueAt: null,
    nextResponseDueAt: null,
    resolutionDueAt: null,
    updatedAt: at,
  };
}

export interface TrackOptions {
  /** When what triggered this happened (the event's time); a conversation first seen gets its policy applied then. */
  at?: Date;
  status?: StatusChange;
  /** Put this policy on the conversation (null: none), applied now. */
  policyId?: string | null;
}

/** Brings the conversation's timing up to date (see above); undefined when the conversation is gone. */
export async function trackConversation(stores: SlaTrackingStores, deps: SlaDeps, workspaceId: string, conversationId: string, options: TrackOptions = {}): Promise<ConversationTiming | undefined> {
  const conversation = await stores.conversation(workspaceId, conversationId);
  if (!conversation) return undefined;
  const now = deps.clock.now();
  const inboxPolicy = await stores.policies.forInbox(conversation.inboxId);
  const stored = await stores.timing.lock(freshTiming(conversation, inboxPolicy?.id ?? null, options.at ?? now));

  const updated = { policyId: stored.policyId, appliedAt: stored.appliedAt, resolvedAt: stored.resolvedAt, reopenedAt: stored.reopenedAt };
  if (options.policyId !== undefined && options.policyId !== stored.policyId) {
    updated.policyId = options.policyId;
    updated.appliedAt = now;
  }
  // Latest wins, so status events handled in any order leave the latest resolve and reopen.
  if (options.status?.toStatus === 'RESOLVED') updated.resolvedAt = latest(updated.resolvedAt, options.status.at);
  if (options.status?.fromStatus === 'RESOLVED' && options.status.toStatus !== 'RESOLVED') updated.reopenedAt = latest(updated.reopenedAt, options.status.at);

  const policy = updated.policyId === null ? null : ((await stores.policies.get(workspaceId, updated.policyId)) ?? null);
  const lastReplyAt = await stores.messages.lastReplyAt(conversation.id);
  const boundary = [lastReplyAt, updated.resolvedAt].reduce<Date | null>((a, b) => (b === null ? a : latest(a, b)), null);
  const calendar = policy?.onlyBusinessHours ? await stores.calendar(conversation.inboxId) : null;
  const plan = planSla({
    stored,
    updated,
    policy,
    facts: {
      status: conversation.status,
      createdAt: conversation.createdAt,
      firstReplyAt: await stores.messages.firstReplyAt(conversation.id),
      waitingSince: await stores.messages.firstIncomingAfter(conversation.id, boundary),
      answeredAt: stored.waitingSince ? await stores.messages.firstReplyFrom(conversation.id, stored.waitingSince) : null,
    },
    now,
    dueAfter: (start, minutes) => {
      const due = addBusinessMinutes(calendar, deps.zones, start.getTime(), minutes);
      return due === null ? null : new Date(due);
    },
  });
  await stores.timing.save(plan.timing);
  for (const round of plan.missed) await recordBreach(stores, { ...plan.timing, policyId: stored.policyId }, round.target, round.dueAt, now);
  for (const round of plan.started) {
    await stores.deadlines.schedule({ workspaceId, conversationId: conversation.id, target: round.target, dueAt: round.dueAt.toISOString() }, round.dueAt);
  }
  return plan.timing;
}

/** One breach, once: the row and `helpdesk.sla.missed` (a breach already recorded records nothing). */
async function recordBreach(stores: SlaTrackingStores, timing: ConversationTiming, target: SlaTarget, dueAt: Date, now: Date): Promise<boolean> {
  const breach: SlaBreach = {
    conversationId: timing.conversationId,
    workspaceId: timing.workspaceId,
    inboxId: timing.inboxId,
    policyId: timing.policyId,
    target,
    dueAt,
    breachedAt: now,
  };
  if (!(await stores.breaches.insert(breach))) return false;
  await stores.events.record(slaMissed(breach));
  return true;
}

export type DeadlineOutcome = 'missed' | 'stale';

/** Runs one deadline job in the caller's transaction; throws `SlaNotDue` when it came early. */
export async function runSlaDeadline(stores: SlaTrackingStores, deps: SlaDeps, job: SlaDeadlineJob): Promise<DeadlineOutcome> {
  const timing = await trackConversation(stores, deps, job.workspaceId, job.conversationId);
  const dueAt = new Date(job.dueAt);
  if (!timing || timing[dueColumn(job.target)]?.getTime() !== dueAt.getTime()) return 'stale';
  const now = deps.clock.now();
  const situation = deadlineSituation(dueAt, now);
  if (ROUND_TRANSITIONS[situation].verdict === null) throw new SlaNotDue(dueAt);
  await recordBreach(stores, timing, job.target, dueAt, now);
  return 'missed';
}

/** Records the breaches of overdue running rounds whose jobs were lost (up to `limit`); answers how many. */
export async function sweepOverdueRounds(stores: SlaTrackingStores, deps: SlaDeps, limit = SLA_SWEEP_LIMIT): Promise<number> {
  let missed = 0;
  for (const job of await stores.overdueRounds(deps.clock.now(), limit)) {
    if ((await runSlaDeadline(stores, deps, job)) === 'missed') missed += 1;
  }
  return missed;
}
