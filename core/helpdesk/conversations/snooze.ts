import type { Clock } from '../../shared/ports.ts';
import { applyConversationEvent, snoozeDue, type ConversationStatusState } from './conversation-status.ts';
import type { Conversation, ConversationStore } from './conversations.ts';
import { statusChanged, type HelpdeskEventLog } from '../events.ts';
import type { SnoozeJob } from './snooze-schedule.ts';

export { scheduleSnoozeExpiry, SNOOZE_EXPIRY_QUEUE, type SnoozeJob, type SnoozeScheduler } from './snooze-schedule.ts';

/**
 * Snooze expiry (spec 3.1: "an automatic change (for example a snooze expiring) carries
 * `silent: true` and leaves no activity message").
 *
 * Snoozing queues one job for `snoozedUntil` in the transaction of the snooze (the outbox, see
 * snooze-schedule.ts), keyed on the conversation and the time, so the same snooze queued twice
 * is one job. When the job runs it locks the conversation and decides with `snoozeJobOutcome`:
 *
 * | conversation when the job runs                      | outcome  | effect                                    |
 * |-----------------------------------------------------|----------|-------------------------------------------|
 * | SNOOZED and `snoozedUntil <= now` (`snoozeDue`)     | `expire` | OPEN, `status_changed` silent, no activity |
 * | SNOOZED until this job's time, not yet due          | `wait`   | the job fails and is retried a bit later   |
 * | anything else (reopened, resolved, re-snoozed, gone)| `stale`  | nothing                                    |
 *
 * A due snooze expires whichever job finds it: a re-snooze to an earlier time queues its own job,
 * and a job of a later time finding it overdue expires it just the same. Each job then sweeps a
 * few other overdue snoozes (`expireDueSnoozes`), which catches a snooze whose job was lost
 * (exhausted its retries while the database was away).
 */

/** How many overdue snoozes one job sweeps besides its own. */
export const SNOOZE_SWEEP_LIMIT = 50;

export interface SnoozeStores {
  /** The conversation, locked until the transaction ends; undefined when gone. */
  lock(workspaceId: string, conversationId: string): Promise<Conversation | undefined>;
  /** Up to `limit` conversations whose snooze is due at `now`, locked (rows locked elsewhere are skipped). */
  lockDue(now: Date, limit: number): Promise<Conversation[]>;
  conversations: Pick<ConversationStore, 'update'>;
  events: HelpdeskEventLog;
}

/** Thrown when a job runs before its snooze is due: the queue retries it. */
export class SnoozeNotDue extends Error {
  constructor(readonly dueAt: Date) {
    super(`the snooze is due at ${dueAt.toISOString()}`);
    this.name = 'SnoozeNotDue';
  }
}

export type SnoozeJobOutcome = 'expire' | 'wait' | 'stale';

/** What a snooze job does with the conversation as it finds it (see the table above). */
export function snoozeJobOutcome(conversation: ConversationStatusState | undefined, jobUntil: Date, now: Date): SnoozeJobOutcome {
  if (!conversation) return 'stale';
  if (snoozeDue(conversation, now)) return 'expire';
  if (conversation.status === 'SNOOZED' && conversation.snoozedUntil?.getTime() === jobUntil.getTime()) return 'wait';
  return 'stale';
}

/** The silent expiry of a due snooze: OPEN, `status_changed` with `silent: true`, no activity message. */
async function expire(stores: SnoozeStores, conversation: Conversation, now: Date): Promise<Conversation> {
  const change = applyConversationEvent(conversation, { type: 'snoozeExpired' }, now);
  // `lastActivityAt` stays: nothing happened in the conversation, it only came back to the queue.
  const updated: Conversation = { ...conversation, status: change.status, snoozedUntil: change.snoozedUntil, updatedAt: now };
  await stores.conversations.update(updated);
  await stores.events.record(statusChanged(updated, conversation.status, null, change.silent));
  return updated;
}

/** Runs one snooze job in the caller's transaction; throws `SnoozeNotDue` when it came early. */
export async function runSnoozeJob(stores: SnoozeStores, deps: { clock: Clock }, job: SnoozeJob): Promise<SnoozeJobOutcome> {
  const now = deps.clock.now();
  const conversation = await stores.lock(job.workspaceId, job.conversationId);
  const until = new Date(job.snoozedUntil);
  const outcome = snoozeJobOutcome(conversation, until, now);
  if (outcome === 'wait') throw new SnoozeNotDue(until);
  if (outcome === 'expire') await expire(stores, conversation!, now);
  return outcome;
}

/** Expires overdue snoozes (up to `limit`) in the caller's transaction; answers how many. */
export async function expireDueSnoozes(stores: SnoozeStores, deps: { clock: Clock }, limit = SNOOZE_SWEEP_LIMIT): Promise<number> {
  const now = deps.clock.now();
  let expired = 0;
  for (const conversation of await stores.lockDue(now, limit)) {
    if (!snoozeDue(conversation, now)) continue;
    await expire(stores, conversation, now);
    expired += 1;
  }
  return expired;
}
