import { createHash } from 'node:crypto';
import { attemptDelivery, DELIVER_QUEUE, fanOut, FANOUT_QUEUE, flushBatch, FLUSH_QUEUE, type Batch, type DispatchDeps } from '../../core/webhooks/dispatch.ts';
import { driverView } from '../../core/messaging/deliver.ts';
import { messagingStores, messagingUnitOfWork } from '../connections/stores.ts';
import type { AppContext } from '../http/context.ts';
import type { JobDefinition } from '../queue/queue.ts';
import { httpSender } from './http-sender.ts';

/**
 * The delivery engine's jobs. Fan-out and flushes are quick database work; deliveries are
 * grouped per webhook so a slow or dead endpoint holds at most a few workers while every other
 * endpoint keeps its pace.
 */
export function webhookJobs(ctx: AppContext): JobDefinition[] {
  const uow = messagingUnitOfWork(ctx);
  const deps = dispatchDeps(ctx);
  return [
    {
      queue: FANOUT_QUEUE,
      retryLimit: 5,
      retryDelay: 1,
      retryBackoff: true,
      expireInSeconds: 60,
      concurrency: 2,
      batchSize: 25,
      handle: async (data: { eventId: string }) => {
        const { typingStarted } = await uow.transaction((stores) => fanOut(stores, deps, data.eventId));
        for (const batch of typingStarted) await simulateTyping(ctx, batch, true);
      },
    },
    {
      queue: FLUSH_QUEUE,
      retryLimit: 5,
      retryDelay: 1,
      retryBackoff: true,
      expireInSeconds: 60,
      concurrency: 1,
      batchSize: 10,
      // Flushes are scheduled for the window's end; poll often so a batch goes out on time.
      dueJobPollSeconds: 0.5,
      handle: async (data: { webhookId: string; connectionId: string; remoteJid: string; version: number }) => {
        const flushed = await uow.transaction((stores) => flushBatch(stores, deps, data));
        const webhook = flushed && (await messagingStores(ctx.db, ctx).webhooks.find(flushed.webhookId));
        if (flushed && webhook?.enableSimulateTyping) await simulateTyping(ctx, flushed, false);
      },
    },
    {
      queue: DELIVER_QUEUE,
      // pg-boss retries only a crash (a worker died mid-request); answers and timeouts are
      // counted by the delivery itself (3 attempts, 5 s then 10 s apart).
      retryLimit: 3,
      retryDelay: 5,
      retryBackoff: false,
      expireInSeconds: 30,
      // A worker fetches the next batch only when every request of its batch has settled, so a
      // hanging endpoint holds each worker that took one of its jobs (up to the 10 s timeout).
      // Its group holds at most `groupConcurrency` jobs at once, hence at most that many workers:
      // more workers than that keep every other endpoint moving.
      concurrency: 16,
      // No larger than `groupConcurrency`: a fetch capped by the group limit must still count as
      // a full batch, or the worker never bursts and sleeps until the next poll after every few
      // jobs (one webhook's backlog drained at ~35 deliveries/s with 25 here; ~175/s with 8).
      batchSize: 8,
      groupConcurrency: 8,
      // Other endpoints' jobs that shared a batch with a hanging one are settled on their own;
      // left `active` until the hanging request ends, they would use up their webhook's
      // `groupConcurrency` and stall it too.
      settleFinishedAfterMs: 250,
      // Retries are scheduled 5 s and 10 s out; find them within a second of their time.
      dueJobPollSeconds: 1,
      handle: async (data: { deliveryId: string }) => {
        await attemptDelivery(uow, deps, httpSender, data.deliveryId);
      },
    },
  ];
}

export function dispatchDeps(ctx: AppContext): DispatchDeps {
  return {
    clock: ctx.clock,
    ids: ctx.ids,
    deliveryIdFor(webhookId, eventIds) {
      const hex = createHash('sha256').update(`${webhookId}:${eventIds.join(',')}`).digest('hex');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    },
  };
}

/** "typing…" to the contact while their messages are held (enableSimulateTyping), best effort. */
async function simulateTyping(ctx: AppContext, batch: Batch, on: boolean): Promise<void> {
  const connection = await messagingStores(ctx.db, ctx).connections.find(batch.connectionId);
  const driver = connection && ctx.drivers.get(connection.driver);
  if (!connection || !driver?.sendTyping || connection.status !== 'CONNECTED') return;
  await driver.sendTyping(driverView(connection), batch.remoteJid.split('@')[0]!, on, lastMessageId(batch)).catch((error: Error) =>
    console.error(`[webhooks] typing for ${batch.remoteJid} failed: ${error.message}`),
  );
}

/** The network id of the newest message held in the batch (the 2.13 `key.id`). */
function lastMessageId(batch: Batch): string | undefined {
  const data = batch.events.at(-1)?.payload.data as { key?: { id?: unknown } } | undefined;
  return typeof data?.key?.id === 'string' ? data.key.id : undefined;
}
