import { DUE_TIME_JOB } from '../due-time-jobs.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { JobDefinition } from '../../kernel/jobs.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { Outbox } from '../../../core/shared/outbox.ts';
import type { Clock } from '../../../core/shared/ports.ts';
import {
  expireDueSnoozes,
  runSnoozeJob,
  SNOOZE_EXPIRY_QUEUE,
  SNOOZE_SWEEP_LIMIT,
  type SnoozeJob,
  type SnoozeScheduler,
  type SnoozeStores,
} from '../../../core/helpdesk/conversations/snooze.ts';
import { conversationStore, toConversation } from './store.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { helpdeskDb } from '../tables.ts';

/**
 * Queues a snooze's expiry for its time, in the snoozing transaction. The job id comes from the
 * conversation and the time: the same snooze queued twice (a retried request) is one job.
 */
export function snoozeScheduler(outbox: Outbox, clock: Clock): SnoozeScheduler {
  return {
    async schedule(job, dueAt) {
      const seconds = Math.max(0, (dueAt.getTime() - clock.now().getTime()) / 1000);
      await outbox.enqueue(SNOOZE_EXPIRY_QUEUE, job, { dedupeKey: `${job.conversationId}:${job.snoozedUntil}`, startAfterSeconds: seconds });
    },
  };
}

export function snoozeStores(base: Kysely<Database>, ctx: PluginContext): SnoozeStores {
  const db = helpdeskDb(base);
  return {
    async lock(workspaceId, conversationId) {
      if (!isUuid(conversationId)) return undefined;
      const row = await db.selectFrom('helpdesk_conversations').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', conversationId).forUpdate().executeTakeFirst();
      return row && toConversation(row);
    },
    async lockDue(now, limit) {
      // `skip locked`: a conversation another worker is expiring (or an agent is changing) is left to it.
      const rows = await db
        .selectFrom('helpdesk_conversations')
        .selectAll()
        .where('status', '=', 'SNOOZED')
        .where('snoozed_until', '<=', now)
        .orderBy('snoozed_until')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      return rows.map(toConversation);
    },
    conversations: conversationStore(base),
    events: helpdeskEventLog(base, ctx),
  };
}

/** The helpdesk's background work (run by apps/worker). */
export function helpdeskJobs(ctx: PluginContext): JobDefinition[] {
  return [
    {
      queue: SNOOZE_EXPIRY_QUEUE,
      // Jobs start at the snooze's time; an early one fails with SnoozeNotDue and runs again.
      ...DUE_TIME_JOB,
      handle: async (data: SnoozeJob) => {
        await ctx.storage.transaction(snoozeStores, (stores) => runSnoozeJob(stores, ctx, data));
        // Its own snooze is settled (committed); then any overdue one whose job was lost.
        await ctx.storage.transaction(snoozeStores, (stores) => expireDueSnoozes(stores, ctx, SNOOZE_SWEEP_LIMIT));
      },
    },
  ];
}
