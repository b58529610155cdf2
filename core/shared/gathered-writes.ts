/**
 * Group commit for one kind of write: an item asked for while no write of its kind runs is
 * written at once (in the next microtask, with whatever else was asked in the same turn); items
 * asked while one runs wait and go together in the next. So an idle system writes each item
 * without delay, and a busy one writes many per statement. Each caller learns its own item's
 * outcome: the write's answer for it, or the write's error.
 */
export function gatheredWrites<T, R>(write: (items: T[]) => Promise<R[]>): (item: T) => Promise<R> {
  let waiting: Array<{ item: T; resolve(result: R): void; reject(error: unknown): void }> = [];
  let writing = false;

  async function drain(): Promise<void> {
    writing = true;
    try {
      while (waiting.length > 0) {
        const batch = waiting;
        waiting = [];
        try {
          const results = await write(batch.map((w) => w.item));
          batch.forEach((w, i) => w.resolve(results[i]!));
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      writing = false;
    }
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!writing) {
        writing = true;
        queueMicrotask(() => void drain());
      }
    });
}
