import type { InsertQueryBuilder, InsertResult, Insertable, Kysely } from 'kysely';

/**
 * Runs an insert that does nothing on conflict (`onConflict(… doNothing())`) and tells whether
 * it inserted: false when the row was already there, or when a concurrent insert won the race.
 */
export async function insertedIfAbsent<DB, TB extends keyof DB>(insert: InsertQueryBuilder<DB, TB, InsertResult>): Promise<boolean> {
  const result = await insert.executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
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
