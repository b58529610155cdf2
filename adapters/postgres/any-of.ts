import { sql, type QueryCreator, type RawBuilder, type SelectQueryBuilder } from 'kysely';

/**
 * `any($n::type[])`: a list of values as one array parameter, for `column = anyOf(…)`. The
 * statement keeps one text whatever the list's length, so it is compiled once (compiled-once.ts)
 * and Postgres plans it once, where `in ($1, …, $n)` was a new text for every n.
 */
export function anyOf(values: readonly unknown[], type: 'uuid' | 'text'): RawBuilder<string> {
  return sql<string>`any(${values}::${sql.raw(type)}[])`;
}

/**
 * A claim's rows, picked and locked by `picked` (`for update skip locked`), as one array of keys:
 * the common table expression `picked` of a claim (`db.with('picked', pickedKeys(…))`), whose
 * statement then finds them by key with `amongPicked`. Written `key in (subquery)` or as a join,
 * a claim was planned once for every limit, on a table without statistics (autovacuum off, or
 * not run yet), as a hash join over a scan of the whole table: every claim read every row.
 */
export function pickedKeys(picked: SelectQueryBuilder<any, any, any>) {
  return (db: QueryCreator<any>) => db.selectNoFrom(sql<string[]>`array(${picked})`.as('ids'));
}

/** The claim's rows (`pickedKeys`) by their key; when none was picked the table is not read at all. */
export function amongPicked(column: string): RawBuilder<boolean> {
  return sql<boolean>`cardinality(picked.ids) > 0 and ${sql.ref(column)} = any(picked.ids)`;
}
