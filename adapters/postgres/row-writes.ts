import type { InsertQueryBuilder, InsertResult, Insertable, Kysely, UpdateQueryBuilder, UpdateResult } from 'kysely';

/**
 * Runs an insert that does nothing on conflict (`onConflict(… doNothing())`) and tells whether
 * it inserted: false when the row was already there, or when a concurrent insert won the race.
 */
export async function insertedIfAbsent<DB, TB extends keyof DB>(insert: InsertQueryBuilder<DB, TB, InsertResult>): Promise<boolean> {
  const result = await insert.executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/**
 * Runs a conditional update (a code used once, a request decided once) and tells whether it
 * changed a row: false when the condition no longer held, e.g. a concurrent update came first.
 */
export async function updatedAny<DB, UT extends keyof DB, TB extends keyof DB>(update: UpdateQueryBuilder<DB, UT, TB, UpdateResult>): Promise<boolean> {
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Writes the row of `table` named by its `key` columns (a unique constraint): inserted when there
 * is none, otherwise its other columns replaced (insert … on conflict do update). The shape of
 * every per-inbox or per-workspace settings row.
 */
export async function putRow<DB, T extends keyof DB & string, K extends keyof Insertable<DB[T]> & string>(
  db: Kysely<DB>,
  table: T,
  key: readonly K[],
  row: Insertable<DB[T]>,
): Promise<void> {
  const changes: Record<string, unknown> = { ...row };
  for (const column of key) delete changes[column];
  // Kysely cannot name the columns of a table chosen by a type parameter: `row` is typed by the caller.
  const rows = db as unknown as Kysely<any>;
  await rows
    .insertInto(table as string)
    .values(row)
    .onConflict((oc) => oc.columns(key).doUpdateSet(changes))
    .execute();
}
