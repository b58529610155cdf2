import { errorField } from '../logging/logger.ts';
import { createHash } from 'node:crypto';
import { fanOut, FANOUT_QUEUE, flushBatch, FLUSH_QUEUE, type Batch, type DispatchDeps } from '../../core/webhooks/dispatch.ts';
import { driverView } from '../../core/messaging/deliver.ts';
import { messagingUnitOfWork, poolMessagingStores } from '../connections/stores.ts';
import type { AppContext } from '../http/context.ts';
import type { JobDefinition } from '../queue/queue.ts';

/**
 * The delivery engine's jobs: a batching window's flush, and the fan-out of one event (events
 * a batch fan-out could not handle, and those queued before events waited in a table). The
 * deliveries themselves are claimed in batches by the engine (delivery-engine.ts).
 */
export function webhookJobs(ctx: AppContext): JobDefinition[] {
  const uow = messagingUnitOfWork(ctx);
  const deps = dispatchDeps(ctx);
  return [
    {
      queue: FANOUT_QUEUE,
      ...RUN_LIKE_DISPATCH,
      handle: async (data: { eventId: string }) => {
        const { typingStarted } = await uow.transaction((stores) => fanOut(stores, deps, data.eventId));
        for (const batch of typingStarted) await simulateTyping(ctx, batch, true);
      },
    },
    {
      queue: FLUSH_QUEUE,
      ...RUN_LIKE_DISPATCH,
      // Flushes are scheduled for the window's end; poll often so a batch goes out on time.
      dueJobPollSeconds: 0.5,
      handle: async (data: { webhookId: string; connectionId: string; remoteJid: string; version: number }) => {
        const flushed = await uow.transaction((stores) => flushBatch(stores, deps, data));
        const webhook = flushed && (await poolMessagingStores(ctx).webhooks.find(flushed.webhookId));
        if (flushed && webhook?.enableSimulateTyping) await simulateTyping(ctx, flushed, false);
      },
    },
  ];
}

/** Both jobs run one at a time, ten jobs a fetch, retried five times with backoff. */
const RUN_LIKE_DISPATCH = { retryLimit: 5, retryDelay: 1, retryBackoff: true, expireInSeconds: 60, concurrency: 1, batchSize: 10 } satisfies Partial<JobDefinition>;

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
export async function simulateTyping(ctx: AppContext, batch: Batch, on: boolean): Promise<void> {
  const connection = await poolMessagingStores(ctx).connections.find(batch.connectionId);
  const driver = connection && ctx.drivers.get(connection.driver);
  if (!connection || !driver?.sendTyping || connection.status !== 'CONNECTED') return;
  await driver.sendTyping(driverView(connection), batch.remoteJid.split('@')[0]!, on, lastMessageId(batch)).catch((error: Error) =>
    ctx.log.warn({ connectionId: batch.connectionId, error: errorField(error) }, 'typing indicator not sent'),
  );
}

/** The network id of the newest message held in the batch (the 2.13 `key.id`). */
function lastMessageId(batch: Batch): string | undefined {
  const data = batch.events.at(-1)?.payload.data as { key?: { id?: unknown } } | undefined;
  return typeof data?.key?.id === 'string' ? data.key.id : undefined;
}
