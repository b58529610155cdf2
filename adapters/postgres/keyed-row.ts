import type { Kysely, Selectable } from 'kysely';
import { isUuid } from '../../core/shared/ids.ts';

/** Column values that name one row of `table`: every one is compared for equality (null with `is`). */
export type RowKey<DB, T extends keyof DB> = Partial<Selectable<DB[T]>>;

/** How a store maps the row it read to its entity. */
export type ToEntity<DB, T extends keyof DB, E> = (row: Selectable<DB[T]>) => E | Promise<E>;

/** The row of `table` whose columns equal `key`, mapped to its entity; undefined when there is none. */
export function findRow<DB, T extends keyof DB & string, E>(db: Kysely<DB>, table: T, key: RowKey<DB, T>, toEntity: ToEntity<DB, T, E>): Promise<E | undefined> {
  return readRow(db, table, key, toEntity, false);
}

/** As `findRow`, the row locked (FOR UPDATE) until the caller's transaction ends. */
export function lockRow<DB, T extends keyof DB & string, E>(db: Kysely<DB>, table: T, key: RowKey<DB, T>, toEntity: ToEntity<DB, T, E>): Promise<E | undefined> {
  return readRow(db, table, key, toEntity, true);
}

/**
 * The row of `table` by its UUID `id` (`findById`), or locked (`lockById`). An id that is not a
 * UUID finds nothing without asking (Postgres would refuse to compare it).
 */
export const findById = byUuid(findRow);
export const lockById = byUuid(lockRow);

/** A read of one row that first turns away an id that is not a UUID. */
function byUuid(read: typeof findRow) {
  return <DB, T extends keyof DB & string, E>(db: Kysely<DB>, table: T, id: string, toEntity: ToEntity<DB, T, E>): Promise<E | undefined> =>
    isUuid(id) ? read(db, table, { id } as RowKey<DB, T>, toEntity) : Promise.resolve(undefined);
}

async function readRow<DB, T extends keyof DB & string, E>(db: Kysely<DB>, table: T, key: RowKey<DB, T>, toEntity: ToEntity<DB, T, E>, lock: boolean): Promise<E | undefined> {
  // Kysely cannot name the columns of a table chosen by a type parameter: `key` is typed by the caller.
  let query = (db as unknown as Kysely<Record<string, Record<string, unknown>>>).selectFrom(table).selectAll();
  for (const [column, value] of Object.entries(key)) {
    // A column left undefined would silently widen the match to other rows.
    if (value === undefined) throw new Error(`The key of a ${table} row leaves ${column} undefined`);
    query = query.where(column, value === null ? 'is' : '=', value);
  }
  const row = await (lock ? query.forUpdate() : query).executeTakeFirst();
  return row && toEntity(row as Selectable<DB[T]>);
}
