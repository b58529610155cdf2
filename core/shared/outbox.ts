/**
 * The transactional outbox: work queued here is committed with the caller's transaction and
 * carried out by the worker afterwards, so a crash between the two never loses it. A
 * `dedupeKey` makes queuing the same work twice a no-op.
 */
export interface Outbox {
  enqueue(
    queue: string,
    data: object,
    options?: {
      dedupeKey?: string;
      startAfterSeconds?: number;
      /** Jobs of one group share a concurrency limit, so one group cannot hold every worker. */
      group?: string;
    },
  ): Promise<void>;
  /** Many jobs of one queue in one write (a campaign's batch of sends); dedupe keys as above. */
  enqueueMany(queue: string, jobs: Array<{ data: object; dedupeKey?: string }>): Promise<void>;
}
