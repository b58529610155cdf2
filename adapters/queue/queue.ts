import { errorField, log } from '../logging/logger.ts';
import { PgBoss, fromKysely, fromPglite, type Job } from 'pg-boss';
import type { Kysely, Transaction } from 'kysely';
import type { Outbox } from '../../core/shared/outbox.ts';
import type { DatabaseHandle } from '../postgres/database.ts';
import { createHash } from 'node:crypto';

/** One kind of background work: its queue, retry policy and idempotent handler. */
export type JobDefinition<T extends object = any> = JobSettings & (JobHandler<T> | BatchHandler<T>);

/** Jobs handled one by one (side by side within a fetched batch, each settled on its own). */
interface JobHandler<T> {
  handle(data: T, job: { id: string; retryCount: number }): Promise<void>;
  handleBatch?: never;
}

/**
 * A fetched batch handled at once (so its writes can be shared): answers, per job in order,
 * the error it fails with (and is retried), or undefined when done.
 */
interface BatchHandler<T> {
  handleBatch(jobs: Array<{ data: T; job: { id: string; retryCount: number } }>): Promise<Array<Error | undefined>>;
  handle?: never;
}

interface JobSettings {
  queue: string;
  retryLimit: number;
  /** Seconds before the first retry; doubled on each retry when `retryBackoff`. */
  retryDelay: number;
  retryBackoff: boolean;
  expireInSeconds: number;
  /** `key_strict_fifo` keeps per-key order (per chat); `standard` otherwise. */
  policy?: 'standard' | 'key_strict_fifo' | 'singleton' | 'stately';
  /** Workers polling this queue in one process. */
  concurrency?: number;
  /** Jobs fetched at once by each worker; handled side by side, each settled on its own. */
  batchSize?: number;
  /** At most this many jobs of one group (see `Outbox` `group`) run at once across workers. */
  groupConcurrency?: number;
  /**
   * Seconds between polls while NOTIFY is active (default 5). NOTIFY wakes workers only for jobs
   * that are due when they commit; a job with a start time (a scheduled retry, a batch flush) is
   * found by this poll, so it can start up to this long after its time.
   */
  dueJobPollSeconds?: number;
  /**
   * pg-boss settles a batch's jobs when the whole batch is done, so a job that finished stays
   * `active` (and counts against its group's `groupConcurrency`) while a slow job of the same
   * batch runs on. With this set, a finished job whose batch is still running this many
   * milliseconds later is completed on its own at once.
   */
  settleFinishedAfterMs?: number;
}

/**
 * pg-boss on the service's own database: over its own pool on Postgres, over the shared
 * PGlite instance on the embedded database.
 */
export class JobQueue {
  private constructor(private readonly boss: PgBoss) {}

  static async start(database: DatabaseHandle, options: { pollingIntervalSeconds?: number } = {}): Promise<JobQueue> {
    // A job whose worker died (killed mid-delivery) is handed out again once it has expired and a
    // supervision pass notices; pg-boss checks every 60 s by default, so such a job waited up to
    // expiry + 60 s. Every 15 s keeps a crashed delivery's retry within about a minute.
    const supervision = { superviseIntervalSeconds: 15, monitorIntervalSeconds: 15 };
    const boss = database.pglite
      ? new PgBoss({ db: fromPglite(database.pglite), backend: 'pglite', schedule: false, useListenNotify: true, ...supervision })
      : new PgBoss({ connectionString: database.url!, max: 5, schedule: false, useListenNotify: true, ...supervision });
    // pg-boss reports background failures as events; they must never crash the process.
    boss.on('error', (error) => log.error({ error: errorField(error) }, 'job queue failed'));
    await boss.start();
    const queue = new JobQueue(boss);
    boss.on('stopped', () => (queue.working = false));
    queue.pollingIntervalSeconds = options.pollingIntervalSeconds ?? 0.5;
    return queue;
  }

  private pollingIntervalSeconds = 0.5;

  /** This process handles jobs: `work` ran and pg-boss has not stopped (readiness). */
  working = false;

  /** Creates the queues of these jobs (idempotent); the server needs this to enqueue. */
  async declare(jobs: JobDefinition[]): Promise<void> {
    for (const job of jobs) {
      const options = {
        retryLimit: job.retryLimit,
        retryDelay: job.retryDelay,
        retryBackoff: job.retryBackoff,
        expireInSeconds: job.expireInSeconds,
      };
      // The policy is fixed at creation; retry and expiry follow the code on every start.
      // `notify` wakes workers the moment a job commits instead of at their next poll.
      if (await this.boss.getQueue(job.queue)) await this.boss.updateQueue(job.queue, { ...options, notify: true });
      else await this.boss.createQueue(job.queue, { ...options, notify: true, policy: job.policy ?? 'standard' });
    }
  }

  /** Starts handling these jobs in this process (the worker's part). */
  async work(jobs: JobDefinition[]): Promise<void> {
    await this.declare(jobs);
    for (const job of jobs) {
      await this.boss.work(
        job.queue,
        {
          pollingIntervalSeconds: this.pollingIntervalSeconds,
          notifyPollingIntervalSeconds: job.dueJobPollSeconds ?? 5,
          // While batches come back full there is a backlog: fetch again at once.
          burstWhenBatchFull: (job.batchSize ?? 1) > 1,
          batchSize: job.batchSize ?? 1,
          localConcurrency: job.concurrency ?? 1,
          ...(job.groupConcurrency && { groupConcurrency: job.groupConcurrency }),
          perJobResults: true,
        },
        // One failing job must not fail (and retry) the others of its batch.
        async (batch: Job<object>[]) => {
          let batchDone = false;
          const early = new Set<ReturnType<typeof setTimeout>>();
          const settleAlone = (item: Job<object>) => {
            if (job.settleFinishedAfterMs === undefined || batch.length < 2) return;
            const timer = setTimeout(() => {
              early.delete(timer);
              // Fenced on the attempt: pg-boss's own settle of the batch later finds it done and skips it.
              if (!batchDone) this.boss.complete(job.queue, { id: item.id, retryCount: item.retryCount ?? 0 }).catch(() => {});
            }, job.settleFinishedAfterMs);
            early.add(timer);
          };
          if (job.handleBatch) {
            const outcomes = await job.handleBatch(batch.map((item) => ({ data: item.data, job: { id: item.id, retryCount: item.retryCount ?? 0 } })));
            return batch.map((item, i) =>
              outcomes[i] ? { id: item.id, status: 'failed' as const, output: { message: outcomes[i].message } } : { id: item.id, status: 'completed' as const },
            );
          }
          try {
            return await Promise.all(
              batch.map(async (item) => {
                try {
                  await job.handle(item.data, { id: item.id, retryCount: item.retryCount ?? 0 });
                  settleAlone(item);
                  return { id: item.id, status: 'completed' as const };
                } catch (error) {
                  return { id: item.id, status: 'failed' as const, output: { message: error instanceof Error ? error.message : String(error) } };
                }
              }),
            );
          } finally {
            batchDone = true;
            for (const timer of early) clearTimeout(timer);
          }
        },
      );
    }
    this.working = true;
  }

  /** An outbox bound to `trx`: jobs become visible only if that transaction commits. */
  outbox(trx: Transaction<any> | Kysely<any>): Outbox {
    return {
      enqueue: async (queue, data, options = {}) => {
        await this.boss.send(queue, data, {
          db: fromKysely(trx),
          // The job id is derived from the dedupe key: pg-boss inserts with ON CONFLICT DO NOTHING,
          // so the same work enqueued twice (a retried request, a replayed event) is one job.
          id: options.dedupeKey ? jobIdFor(queue, options.dedupeKey) : undefined,
          startAfter: options.startAfterSeconds,
          group: options.group ? { id: options.group } : undefined,
        });
      },
      enqueueMany: async (queue, jobs) => {
        if (jobs.length === 0) return;
        await this.boss.insert(
          queue,
          jobs.map((job) => ({ data: job.data, id: job.dedupeKey ? jobIdFor(queue, job.dedupeKey) : undefined })),
          { db: fromKysely(trx) },
        );
      },
    };
  }

  async stop(): Promise<void> {
    this.working = false;
    await this.boss.stop({ graceful: true, timeout: 5_000, close: true });
  }
}

/** A UUID-shaped id that is the same for the same queue and dedupe key. */
export function jobIdFor(queue: string, dedupeKey: string): string {
  const hex = createHash('sha256').update(`${queue}\u0000${dedupeKey}`).digest('hex');
  // Version 8 (custom) and RFC 4122 variant bits, so it is a valid UUID.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
