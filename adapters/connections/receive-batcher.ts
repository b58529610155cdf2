import type { Connection } from '../../core/connections/connection.ts';
import type { ReceivedMessage } from '../../core/messaging/incoming.ts';
import { receiveMessage, ReplayedMessage, type ReceiveOutcome } from '../../core/messaging/receive.ts';
import { receiveMessages } from '../../core/messaging/receive-many.ts';
import { onePerContext, type AppContext } from '../http/context.ts';
import { overlappingTurns } from './overlapping-turns.ts';
import { messagingDeps, messagingStores } from './stores.ts';
import { errorField } from '../logging/logger.ts';

/**
 * A caller's own check of the connection its message arrives on (read once for the batch):
 * what it throws is that message's answer, and the message is not stored.
 */
export type Admission = (connection: Connection | undefined) => void;

interface Waiting {
  connectionId: string;
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
 * lone message is written at once. A connection's batches are written one after another
 * (overlapping-turns.ts: the next batch's transaction opens and reads the connection while the
 * one before writes, and writes while that one commits), so its messages are stored and
 * published in the order they arrived. Each
 * caller still learns its own outcome; if a batch cannot be written as one, its messages are
 * stored one by one, in order, so a message that fails fails alone.
 */
export const receiveBatcher = onePerContext(createBatcher);

/** Messages stored together at most (one transaction). */
const MAX_BATCH = 64;

function createBatcher(ctx: AppContext) {
  const deps = messagingDeps(ctx);
  const turns = overlappingTurns(ctx.db, {
    maxBatch: MAX_BATCH,
    batchLength,
    async open(trx, first: Waiting) {
      const stores = messagingStores(trx, ctx);
      return { stores, connection: await stores.connections.find(first.connectionId) };
    },
    async write(_trx, { stores, connection }, batch) {
      if (isEcho(batch[0]!.received)) {
        // An echo of our own send, alone in its batch: it may settle that send instead.
        const [echo] = batch as [Waiting];
        const refused = refusal(echo, connection);
        if (refused) return () => echo.reject(refused.refused);
        const outcome = connection ? await receiveMessage(stores, deps, connection, echo.received) : ({ stored: false } as const);
        return () => echo.resolve(outcome);
      }
      const refusals = batch.map((w) => refusal(w, connection));
      const admitted = batch.filter((_, i) => !refusals[i]);
      const stored = connection && admitted.length > 0 ? await receiveMessages(stores, deps, connection, admitted.map((w) => w.received)) : [];
      const results = batch.map((_, i): Result => refusals[i] ?? stored[admitted.indexOf(batch[i]!)] ?? { stored: false });
      return () => {
        results.forEach((result, i) => ('refused' in result ? batch[i]!.reject(result.refused) : batch[i]!.resolve(result)));
        countReceived(connection?.driver, results.filter((r, i) => 'stored' in r && r.stored && !batch[i]!.received.fromMe).length);
      };
    },
    async fallback(batch, error) {
      if (batch.length === 1 && !isEcho(batch[0]!.received)) return batch[0]!.reject(error);
      // Rolled back as a whole: each message is stored on its own, so one that cannot be stored
      // fails alone (and an echo that came twice is told apart from a failure).
      if (batch.length > 1) ctx.log.warn({ connectionId: batch[0]!.connectionId, messages: batch.length, error: errorField(error) }, 'a batch of received messages failed; storing them one by one');
      for (const waiter of batch) await receiveOne(waiter).then(waiter.resolve, waiter.reject);
    },
    lost: (error, connectionId) => ctx.log.error({ connectionId, error: errorField(error) }, 'received messages could not be answered'),
  });

  /**
   * Stores a message from the network on this connection: the message as stored, or `stored:
   * false` for a replay (or a connection that is gone). `admit` checks the connection first.
   */
  function receive(id: string, received: ReceivedMessage, admit?: Admission): Promise<ReceiveOutcome> {
    // One queue per connection however its UUID is spelt: its batches are written one at a time.
    const connectionId = id.toLowerCase();
    return new Promise((resolve, reject) => turns.add(connectionId, { connectionId, received, admit, resolve, reject }));
  }

  /** One message in its own transaction (core `receiveMessage`). */
  async function receiveOne(waiter: Waiting): Promise<ReceiveOutcome> {
    try {
      let driver: string | undefined;
      const outcome = await ctx.db.transaction().execute(async (trx) => {
        const stores = messagingStores(trx, ctx);
        const connection = await stores.connections.find(waiter.connectionId);
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
  return echo === -1 ? queue.length : echo;
}

function isEcho(received: ReceivedMessage): boolean {
  return received.fromMe && Boolean(received.clientMessageId);
}
