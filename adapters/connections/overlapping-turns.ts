import type { Kysely } from 'kysely';
import type { Database } from '../postgres/schema.ts';

/**
 * Group commit in overlapping turns: items queued under one key (a connection's messages) are
 * written in batches, one transaction each, strictly one after another, so a key's writes never
 * overlap (no batch waits on another's row locks, and rows and events keep arrival order). Two
 * turns of a key are under way at once, though: while one batch writes and commits, the next
 * turn already holds its transaction and has made its reads (`open`), and it takes the items
 * queued meanwhile the moment the first has committed. The wait between a key's batches is then
 * its writes alone, not the transaction's start and reads as well.
 */
export interface TurnSteps<Item, Opened> {
  /** Items written together at most. */
  maxBatch: number;
  /**
   * What a turn reads whatever its batch, in its transaction, while the turn before it may still
   * be writing: it must lock no rows (the turn before may be about to write them).
   * `first` is the first item queued; every item of a key shares what this reads.
   */
  open(trx: Kysely<Database>, first: Item): Promise<Opened>;
  /** How many of the queued items the next batch takes (at most `maxBatch`; all of them by default). */
  batchLength?(queue: readonly Item[]): number;
  /** Writes the batch in the turn's transaction; what it returns runs once that has committed (answering the callers). */
  write(trx: Kysely<Database>, opened: Opened, batch: Item[]): Promise<() => void>;
  /** The batch's transaction failed (`error`) and rolled back: stores its items another way, outside it (one by one). */
  fallback(batch: Item[], error: unknown): Promise<void>;
  /** A failure no item could be told of (a bug): logged. */
  lost(error: unknown, key: string): void;
}

export function overlappingTurns<Item, Opened>(db: Kysely<Database>, steps: TurnSteps<Item, Opened>) {
  const queues = new Map<string, Item[]>();
  const underWay = new Map<string, Turn[]>();

  /** Queues an item under its key; a turn takes it with the others queued. */
  function add(key: string, item: Item): void {
    const queue = queues.get(key) ?? [];
    queue.push(item);
    queues.set(key, queue);
    // Items queued in the same turn of the event loop go together.
    if (queue.length === 1) setImmediate(() => next(key));
  }

  /** Starts a turn for the queued items, unless the turns under way will take them. */
  function next(key: string): void {
    const queue = queues.get(key);
    const turns = underWay.get(key) ?? [];
    // A turn that has not taken its batch yet takes these items too.
    if (!queue?.length || turns.length >= TURNS_AT_ONCE || turns.some((t) => !t.took)) return;
    let settle!: (committed: boolean) => void;
    const turn: Turn = { settled: new Promise<boolean>((resolve) => (settle = resolve)), took: false, done: Promise.resolve() };
    turn.done = run(key, queue[0]!, turn, turns.at(-1), settle)
      .catch((error) => steps.lost(error, key))
      .finally(() => {
        settle(false);
        const left = (underWay.get(key) ?? []).filter((t) => t !== turn);
        if (left.length) underWay.set(key, left);
        else underWay.delete(key);
        next(key);
      });
    underWay.set(key, [...turns, turn]);
  }

  async function run(key: string, first: Item, turn: Turn, before: Turn | undefined, settle: (committed: boolean) => void): Promise<void> {
    let batch: Item[] = [];
    try {
      const committed = await db.transaction().execute(async (trx) => {
        const opened = await steps.open(trx, first);
        if (before && !(await before.settled)) throw new TurnBehindFallback();
        batch = take(key, turn);
        return steps.write(trx, opened, batch);
      });
      settle(true);
      committed();
      return;
    } catch (error) {
      if (error instanceof TurnBehindFallback) {
        await before!.done;
        return run(key, first, turn, undefined, settle);
      }
      if (!turn.took) {
        // The transaction failed before the turn took its batch: it takes it now, in its turn.
        if (before) await before.done;
        batch = take(key, turn);
      }
      // The turn behind starts over once this one is done (see `Turn.settled`).
      settle(false);
      await steps.fallback(batch, error);
    }
  }

  /** Takes the turn's batch off the queue; if items are left, the next turn gets ready behind it. */
  function take(key: string, turn: Turn): Item[] {
    const queue = queues.get(key) ?? [];
    const batch = queue.splice(0, Math.min(steps.maxBatch, steps.batchLength?.(queue) ?? queue.length));
    turn.took = true;
    if (queue.length === 0) queues.delete(key);
    else next(key);
    return batch;
  }

  return { add };
}

/** Turns of one key under way at once: one writing, the next ready behind it. */
const TURNS_AT_ONCE = 2;

interface Turn {
  /**
   * true once the turn's batch has committed and it writes nothing more; false when it must
   * write outside its transaction (`fallback`): the turn behind it then gives its transaction
   * back and starts over once this one is `done`. Holding it open would starve a pool of one
   * connection (PGlite has only one) of the connection the fallback needs.
   */
  settled: Promise<boolean>;
  /** Whether it has taken its batch off the queue: until then, the items queued are its own. */
  took: boolean;
  /** Everything it took is written (or has failed) and its callers are answered. */
  done: Promise<void>;
}

/** The turn before could not write its batch in one transaction: start over after it. */
class TurnBehindFallback extends Error {}
