/**
 * One mapping between a table's snake_case columns and the domain's camelCase fields, typed: a
 * row read becomes `camelCased(row)`, an entity written becomes `snakeCased(entity)`. Stores add
 * only what is more than a rename (a narrowed union, a sealed secret, a computed column).
 */
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

export type SnakeCased<T> = { [K in keyof T as K extends string ? SnakeCase<K> : K]: T[K] };
export type CamelCased<T> = { [K in keyof T as K extends string ? CamelCase<K> : K]: T[K] };

export function camelCased<T extends object>(row: T): CamelCased<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) out[key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())] = value;
  return out as CamelCased<T>;
}

export function snakeCased<T extends object>(entity: T): SnakeCased<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entity)) out[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  return out as SnakeCased<T>;
}
