import type { JobDefinition } from '../kernel/jobs.ts';
import type { PluginContext } from '../kernel/context.ts';
import { CAMPAIGN_RUN_QUEUE, runCampaign } from '../../core/campaigns/sending.ts';
import { campaignDeps, campaignUnitOfWork } from './use-case-stores.ts';

/**
 * The pacer: one job per run of a campaign, keyed by (campaign, run number), so a run is queued
 * once and a stale one does nothing. A run that fails (a database error) is retried; every run is
 * one transaction, so a retry starts from what was committed.
 */
export function campaignJobs(ctx: PluginContext): JobDefinition[] {
  const uow = campaignUnitOfWork(ctx);
  const deps = campaignDeps(ctx);
  return [
    {
      queue: CAMPAIGN_RUN_QUEUE,
      retryLimit: 10,
      retryDelay: 1,
      retryBackoff: true,
      // A run takes milliseconds; one whose worker died is handed out again soon (supervision every 15 s).
      expireInSeconds: 15,
      concurrency: 2,
      batchSize: 4,
      // Runs are scheduled for their pace's next slot: look for due ones every second.
      dueJobPollSeconds: 1,
      handle: (data: { campaignId: string; tick: number }) => runCampaign(uow, deps, data),
    },
  ];
}
