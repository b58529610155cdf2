import type { PluginContext } from '../../kernel/context.ts';
import type { JobDefinition } from '../../kernel/jobs.ts';
import { outboundPost } from '../../kernel/webhooks.ts';
import { API_CHANNEL_DELIVER_QUEUE, attemptApiDelivery } from '../../../core/helpdesk/api-channel/outbound.ts';
import type { ApiChannelStores } from '../../../core/helpdesk/api-channel/inbound.ts';
import type { UnitOfWork } from '../../../core/shared/unit-of-work.ts';
import { helpdeskMessageStores } from '../conversations/store.ts';

/**
 * The API channel's one job: an attempt to POST a reply to its inbox's webhookUrl. The request
 * runs outside any transaction; the delivery counts its own attempts (3, 5 s then 10 s apart),
 * so pg-boss retries only a crash (a worker that died mid-request).
 */
export function apiChannelJobs(ctx: PluginContext): JobDefinition[] {
  const uow: UnitOfWork<ApiChannelStores> = { transaction: (work) => ctx.storage.transaction(helpdeskMessageStores, work) };
  const deps = { clock: ctx.clock, ids: ctx.ids };
  return [
    {
      queue: API_CHANNEL_DELIVER_QUEUE,
      retryLimit: 3,
      retryDelay: 5,
      retryBackoff: false,
      // Above the 10 s request timeout, so a live attempt is never handed out twice.
      expireInSeconds: 30,
      // Jobs are grouped per inbox: a slow app holds at most `groupConcurrency` workers.
      concurrency: 8,
      batchSize: 4,
      groupConcurrency: 4,
      settleFinishedAfterMs: 250,
      // Retries are scheduled 5 s and 10 s out; find them within a second of their time.
      dueJobPollSeconds: 1,
      handle: async (data: { messageId: string }) => {
        await attemptApiDelivery(uow, deps, { post: outboundPost(ctx.outbound) }, data.messageId);
      },
    },
  ];
}
