import type { PluginContext } from '../../kernel/context.ts';
import type { JobDefinition } from '../../kernel/jobs.ts';
import { DEFAULT_CHATS_PER_PAGE, failInboxSync, INBOX_SYNC_QUEUE, runInboxSyncPage, type InboxSyncJob } from '../../../core/helpdesk/inboxes/inbox-sync.ts';
import { inboxSyncStores } from './store.ts';

/**
 * Chats per page of a new sync (fixed on the sync when it starts). A page is one transaction
 * holding its contacts' locks and the workspace's conversation counter: small pages keep live
 * messages from waiting long. Tests lower it to prove paging.
 */
export const inboxSyncTuning = { chatsPerPage: DEFAULT_CHATS_PER_PAGE };

/** A page that keeps failing is retried this often (5 s, then doubling: about 2.5 minutes in all). */
const RETRY_LIMIT = 5;

/** The history sync's one job: a page of chats (core/helpdesk/inboxes/inbox-sync.ts). */
export function inboxSyncJobs(ctx: PluginContext): JobDefinition[] {
  const deps = { clock: ctx.clock, ids: ctx.ids, random: ctx.random };
  return [
    {
      queue: INBOX_SYNC_QUEUE,
      retryLimit: RETRY_LIMIT,
      retryDelay: 5,
      retryBackoff: true,
      // A page of 20 chats × 100 messages takes seconds; a worker that died mid-page hands it
      // back after this (the page rolled back; its retry starts from the same cursor).
      expireInSeconds: 300,
      concurrency: 2,
      handle: async (data: InboxSyncJob, job) => {
        try {
          await ctx.storage.transaction(inboxSyncStores, (s) => runInboxSyncPage(s, deps, data));
        } catch (error) {
          // The last attempt failed: the sync FAILS (so a new one may start) instead of staying RUNNING.
          if (job.retryCount >= RETRY_LIMIT) {
            ctx.log.error({ syncId: data.syncId, error: { message: error instanceof Error ? error.message : String(error) } }, 'helpdesk history sync failed');
            const reason = 'A page of chats kept failing; start the sync again to import the rest (what was imported stays)';
            await ctx.storage.transaction(inboxSyncStores, (s) => failInboxSync(s, deps, data, reason));
          }
          throw error;
        }
      },
    },
  ];
}
