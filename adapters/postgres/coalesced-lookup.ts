/**
 * Lookups of one key each, made by requests that arrive together, sent to the database as one
 * statement: the keys asked during one turn of the event loop are read together right after it
 * (`setImmediate`), each caller getting its own row. Every lookup still reads the database after
 * it was asked (nothing is cached), so a change committed before a request arrived is always
 * seen; a busy server just makes one statement where it made dozens.
 *
 * `readMany` answers the rows of the keys it was given, by key; a key without a row is absent.
 * When it fails, every lookup of that read fails with its error.
 */
export function coalescedLookup<Row>(readMany: (keys: string[]) => Promise<ReadonlyMap<string, Row>>, options: { maxKeys?: number } = {}): (key: string) => Promise<Row | undefined> {
  const maxKeys = options.maxKeys ?? 500;
  let waiting = new Map<string, Array<Waiter<Row>>>();
  let scheduled = false;

  function readWaiting() {
    scheduled = false;
    const batch = waiting;
    waiting = new Map();
    const keys = [...batch.keys()];
    for (let start = 0; start < keys.length; start += maxKeys) {
      const part = keys.slice(start, start + maxKeys);
      readMany(part).then(
        (rows) => {
          for (const key of part) for (const waiter of batch.get(key)!) waiter.resolve(rows.get(key));
        },
        (error: unknown) => {
          for (const key of part) for (const waiter of batch.get(key)!) waiter.reject(error);
        },
      );
    }
  }

  return (key) =>
    new Promise<Row | undefined>((resolve, reject) => {
      const waiters = waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
      if (!scheduled) {
        scheduled = true;
        setImmediate(readWaiting);
      }
    });
}

interface Waiter<Row> {
  resolve(row: Row | undefined): void;
  reject(error: unknown): void;
}
