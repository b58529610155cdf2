import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';

/**
 * `any($n::type[])`: a list of values as one array parameter, for `column = anyOf(…)`. The
 * statement keeps one text whatever the list's length, so it is compiled once (compiled-once.ts)
 * and Postgres plans it once, where `in ($1, …, $n)` was a new text for every n.
 */
export function anyOf(values: readonly unknown[], type: 'uuid' | 'text'): RawBuilder<string> {
  return sql<string>`any(${values}::${sql.raw(type)}[])`;
}

/**
 * `column = any(array(subquery))`: the rows a subquery picked and locked (`for update skip
 * locked`), found again by their key. Written `column in (subquery)` or as a join, a claim was
 * planned once for every limit, on a table without statistics (autovacuum off, or not run yet),
 * as a hash join over a scan of the whole table: every claim read every row.
 */
export function amongPicked(column: string, picked: SelectQueryBuilder<any, any, any>): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} = any(array(${picked}))`;
}
