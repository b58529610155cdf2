import { sql, type RawBuilder } from 'kysely';

/**
 * `any($n::type[])`: a list of values as one array parameter, for `column = anyOf(…)`. The
 * statement keeps one text whatever the list's length, so it is compiled once (compiled-once.ts)
 * and Postgres plans it once, where `in ($1, …, $n)` was a new text for every n.
 */
export function anyOf(values: readonly unknown[], type: 'uuid' | 'text'): RawBuilder<string> {
  return sql<string>`any(${values}::${sql.raw(type)}[])`;
}
