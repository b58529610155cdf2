import { DUE_TIME_JOB } from '../due-time-jobs.ts';
import type { JobDefinition } from '../../kernel/jobs.ts';
import { runSlaDeadline, SLA_DEADLINE_QUEUE, SLA_SWEEP_LIMIT, sweepOverdueRounds, type SlaDeadlineJob } from '../../../core/helpdesk/sla/tracking.ts';
import type { PluginContext } from '../../kernel/plugin.ts';
import { slaDeps } from './subscribers.ts';
import { slaTrackingStores } from './tracking-store.ts';

/** The deadline of each running SLA round (core/helpdesk/sla/tracking.ts), run by apps/worker. */
export function slaJobs(ctx: PluginContext): JobDefinition[] {
  return [
    {
      queue: SLA_DEADLINE_QUEUE,
      // Jobs start at their round's due time; an early one fails with SlaNotDue and runs again.
      ...DUE_TIME_JOB,
      handle: async (data: SlaDeadlineJob) => {
        await ctx.storage.transaction(slaTrackingStores, (s) => runSlaDeadline(s, slaDeps(ctx), data));
        // Its own round is settled (committed); then any overdue round whose job was lost.
        await ctx.storage.transaction(slaTrackingStores, (s) => sweepOverdueRounds(s, slaDeps(ctx), SLA_SWEEP_LIMIT));
      },
    },
  ];
}
