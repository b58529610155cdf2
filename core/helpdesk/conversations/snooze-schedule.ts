import type { ConversationStatus } from './conversation-status.ts';

/**
 * What a snooze leaves behind when it is set: one job for its time, queued in the transaction of
 * the snooze (the outbox). The job's handling is in snooze.ts; this part stays apart so the
 * conversation use cases can queue it without depending on them.
 */
export const SNOOZE_EXPIRY_QUEUE = 'helpdesk.snooze-expiry';

export interface SnoozeJob {
  workspaceId: string;
  conversationId: string;
  /** ISO time the snooze was set to end (the job's own snooze; a later re-snooze makes it stale). */
  snoozedUntil: string;
}

/** Where a snooze's expiry job is queued: the transactional outbox of the snoozing transaction. */
export interface SnoozeScheduler {
  schedule(job: SnoozeJob, dueAt: Date): Promise<void>;
}

/** The job of a conversation just snoozed (call in the snoozing transaction); nothing for other statuses. */
export async function scheduleSnoozeExpiry(
  scheduler: SnoozeScheduler,
  conversation: { id: string; workspaceId: string; status: ConversationStatus; snoozedUntil: Date | null },
): Promise<void> {
  if (conversation.status !== 'SNOOZED' || conversation.snoozedUntil === null) return;
  await scheduler.schedule(
    { workspaceId: conversation.workspaceId, conversationId: conversation.id, snoozedUntil: conversation.snoozedUntil.toISOString() },
    conversation.snoozedUntil,
  );
}
