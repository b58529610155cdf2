import type { Connection } from '../../core/connections/connection.ts';
import type { ReceivedMessage } from '../../core/messaging/incoming.ts';
import { receiveMessage, ReplayedMessage, type ReceiveOutcome } from '../../core/messaging/receive.ts';
import { receiveMessages } from '../../core/messaging/receive-many.ts';
import { onePerContext, type AppContext } from '../http/context.ts';
import { messagingDeps, messagingStores } from './stores.ts';
import { errorField } from '../logging/logger.ts';

/** Messages stored together at most (one transaction). */
const MAX_BATCH = 64;

/**
 * A caller's own check of the connection its message arrives on (read once for the batch):
 * what it throws is that message's answer, and the message is not stored.
 */
export type Admission = (connection: Connection | undefined) => void;

interface Waiting {
  received: ReceivedMessage;
  admit?: Admission;
  resolve(result: ReceiveOutcome): void;
  reject(error: unknown): void;
}

/**
 * Group commit for messages from the network: those of one connection that arrive while earlier
 * ones are being written (a callback carrying many, concurrent callbacks, a driver's burst) are
 * stored together (core `receiveMessages`: one transaction, multi-row writes, their events in
 * one statement), so under load the database does a fraction of the work per message, and a
 * lone message is written at once. One batch per connection is written at a time, so a
 * connection's messages are stored and published in the order they arrived. Each caller still
 * learns its own outcome; if a batch cannot be written as one, its messages are stored one by
 * one, in order, so a message that fails fails alone.
 */
export const receiveBatcher = onePerContext(createBatcher);

function createBatcher(ctx: AppContext) {
  const deps = messagingDeps(ctx);
  const waiting = new Map<string, Waiting[]>();
  const writing = new Set<string>();

  /**
   * Stores a message from the network on this connection: the message as stored, or `stored:
   * false` for a replay (or a connection that is gone). `admit` checks the connection first.
   */
  function receive(id: string, received: ReceivedMessage, admit?: Admission): Promise<ReceiveOutcome> {
    // One queue per connection however its UUID is spelt: its batches are written one at a time.
    const connectionId = id.toLowerCase();
    return new Promise((resolve, reject) => {
      const queue = waiting.get(connectionId) ?? [];
      queue.push({ received, admit, resolve, reject });
      waiting.set(connectionId, queue);
      // Messages that arrived in the same turn of the event loop go together.
      if (queue.length === 1) setImmediate(() => next(connectionId));
    });
  }

  function next(connectionId: string): void {
    const queue = waiting.get(connectionId);
    if (!queue?.length || writing.has(connectionId)) return;
    const batch = queue.splice(0, batchLength(queue));
    if (queue.length === 0) waiting.delete(connectionId);
    writing.add(connectionId);
    write(connectionId, batch).finally(() => {
      writing.delete(connectionId);
      next(connectionId);
    });
  }

  async function write(connectionId: string, batch: Waiting[]): Promise<void> {
    if (!isEcho(batch[0]!.received)) {
      try {
        let driver: string | undefined;
        const results = await ctx.db.transaction().execute(async (trx) => {
          const stores = messagingStores(trx, ctx);
          const connection = await stores.connections.find(connectionId);
          driver = connection?.driver;
          const refusals = batch.map((w) => refusal(w, connection));
          const admitted = batch.filter((_, i) => !refusals[i]);
          const stored = connection && admitted.length > 0 ? await receiveMessages(stores, deps, connection, admitted.map((w) => w.received)) : [];
          return batch.map((_, i): Result => refusals[i] ?? stored[admitted.indexOf(batch[i]!)] ?? { stored: false });
        });
        results.forEach((result, i) => ('refused' in result ? batch[i]!.reject(result.refused) : batch[i]!.resolve(result)));
        countReceived(driver, results.filter((r, i) => 'stored' in r && r.stored && !batch[i]!.received.fromMe).length);
        return;
      } catch (error) {
        if (batch.length === 1) return batch[0]!.reject(error);
        // Rolled back as a whole: each message is stored on its own below, so one that cannot
        // be stored fails alone.
        ctx.log.warn({ connectionId, messages: batch.length, error: errorField(error) }, 'a batch of received messages failed; storing them one by one');
      }
    }
    for (const waiter of batch) await receiveOne(connectionId, waiter).then(waiter.resolve, waiter.reject);
  }

  /** One message in its own transaction (core `receiveMessage`). */
  async function receiveOne(connectionId: string, waiter: Waiting): Promise<ReceiveOutcome> {
    try {
      let driver: string | undefined;
      const outcome = await ctx.db.transaction().execute(async (trx) => {
        const stores = messagingStores(trx, ctx);
        const connection = await stores.connections.find(connectionId);
        driver = connection?.driver;
        waiter.admit?.(connection);
        return connection ? receiveMessage(stores, deps, connection, waiter.received) : ({ stored: false } as const);
      });
      countReceived(driver, outcome.stored && !waiter.received.fromMe ? 1 : 0);
      return outcome;
    } catch (error) {
      // A concurrent delivery of the same message stored it first, and publishes it.
      if (error instanceof ReplayedMessage) return { stored: false };
      throw error;
    }
  }

  /** A contact's messages, counted once committed; a replay, or the account's own message typed on the phone, is not. */
  function countReceived(driver: string | undefined, n: number): void {
    if (driver) for (let i = 0; i < n; i++) ctx.metrics?.messageReceived(driver);
  }

  return { receive };
}

type Result = ReceiveOutcome | { refused: unknown };

/** What the caller's check of the connection threw, if it did. */
function refusal(waiter: Waiting, connection: Connection | undefined): { refused: unknown } | undefined {
  try {
    waiter.admit?.(connection);
    return undefined;
  } catch (error) {
    return { refused: error };
  }
}

/**
 * An echo of our own send may settle that send rather than be stored: it goes alone, through
 * `receiveMessage`. Otherwise the batch is the messages up to the next echo (order is kept).
 */
function batchLength(queue: readonly Waiting[]): number {
  if (isEcho(queue[0]!.received)) return 1;
  const echo = queue.findIndex((w, i) => i > 0 && isEcho(w.received));
  return Math.min(MAX_BATCH, echo === -1 ? queue.length : echo);
}

function isEcho(received: ReceivedMessage): boolean {
  return received.fromMe && Boolean(received.clientMessageId);
}
