import type { Kysely } from 'kysely';
import type { Database } from '../postgres/schema.ts';

/**
 * Group commit in overlapping turns: items queued under one key (a connection's messages) are
 * written in batches, one transaction each, one after another: a batch writes once the batch
 * before it has written, and commits once that one has committed, so rows and events keep
 * arrival order and a batch only ever waits on locks of the batch before, never the other way
 * round. Two turns of a key are under way at once: while one batch commits, the next turn, whose
 * transaction is open and whose reads (`open`) were made meanwhile, takes the items queued and
 * writes them. The wait between a key's batches is then their writes alone, not the
 * transaction's start, reads and commit as well.
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
    // A turn that has not taken its batch yet takes these items too; one that starts over is
    // let write first (a turn behind it would hold a connection it needs).
    if (!queue?.length || turns.length >= TURNS_AT_ONCE || turns.some((t) => !t.took || t.startingOver)) return;
    const signals = { written: (_: boolean) => {}, settled: (_: boolean) => {} };
    const turn: Turn = {
      written: new Promise<boolean>((resolve) => (signals.written = resolve)),
      settled: new Promise<boolean>((resolve) => (signals.settled = resolve)),
      took: false,
      startingOver: false,
      done: Promise.resolve(),
    };
    turn.done = run(key, queue[0]!, turn, turns.at(-1), signals)
      .catch((error) => steps.lost(error, key))
      .finally(() => {
        signals.written(false);
        signals.settled(false);
        const left = (underWay.get(key) ?? []).filter((t) => t !== turn);
        if (left.length) underWay.set(key, left);
        else underWay.delete(key);
        next(key);
      });
    underWay.set(key, [...turns, turn]);
  }

  /**
   * A turn: opens its transaction and reads; once the turn before has written, takes its batch
   * and writes it (a statement that meets a row the turn before wrote waits for its commit, in
   * Postgres); once the turn before has committed, commits. `taken`: the batch of a turn that
   * starts over after the turn before failed to commit.
   */
  async function run(key: string, first: Item, turn: Turn, before: Turn | undefined, signals: Signals, taken?: Item[]): Promise<void> {
    let batch: Item[] = taken ?? [];
    try {
      const committed = await db.transaction().execute(async (trx) => {
        const opened = await steps.open(trx, first);
        if (!taken) {
          if (before && !(await before.written)) throw new TurnBehindFallback();
          batch = take(key, turn);
        }
        const answer = await steps.write(trx, opened, batch);
        // Committed after the turn before, so that a key's batches commit in the order they wrote.
        if (before && !(await before.settled)) throw new TurnBehindFallback();
        signals.written(true);
        if (turn.startingOver) {
          turn.startingOver = false;
          next(key);
        }
        return answer;
      });
      signals.settled(true);
      committed();
      return;
    } catch (error) {
      if (error instanceof TurnBehindFallback) {
        // Its transaction is given back; the batch (if taken) is written again after the turn before.
        turn.startingOver = turn.took;
        await before!.done;
        return run(key, first, turn, undefined, signals, turn.took ? batch : undefined);
      }
      // The turn behind starts over once this one is done (see `Turn.written`).
      signals.written(false);
      signals.settled(false);
      // What the turn before did, its fallback included, comes first.
      if (before) await before.done;
      if (!turn.took) batch = take(key, turn);
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

/** Turns of one key under way at once: one committing, the next writing behind it. */
const TURNS_AT_ONCE = 2;

interface Turn {
  /**
   * true once the turn has written its batch and the turn before it has committed: only its own
   * commit is left, and the turn behind may write. false when it failed and must write outside
   * its transaction (`fallback`): the turn behind then gives its transaction back and starts
   * over once this one is `done`. Holding it open would starve a pool of one connection (PGlite
   * has only one) of the connection the fallback needs, and its rows' locks would hold up the
   * fallback's writes.
   */
  written: Promise<boolean>;
  /** true once its batch has committed; false when it failed (as `written`). */
  settled: Promise<boolean>;
  /** Whether it has taken its batch off the queue: until then, the items queued are its own. */
  took: boolean;
  /** It took its batch, but the turn before failed to commit: it writes the batch again once that one is done. */
  startingOver: boolean;
  /** Everything it took is written (or has failed) and its callers are answered. */
  done: Promise<void>;
}

interface Signals {
  written(ok: boolean): void;
  settled(ok: boolean): void;
}

/** The turn before could not write or commit its batch in one transaction: start over after it. */
class TurnBehindFallback extends Error {}
