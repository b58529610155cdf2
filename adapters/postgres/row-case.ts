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
  for (const key of Object.keys(row)) out[renamed(camelNames, key, toCamel)] = (row as Record<string, unknown>)[key];
  return out as CamelCased<T>;
}

export function snakeCased<T extends object>(entity: T): SnakeCased<T> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(entity)) out[renamed(snakeNames, key, toSnake)] = (entity as Record<string, unknown>)[key];
  return out as SnakeCased<T>;
}

// Column names are few and every row repeats them: each is renamed once (a regex per key per row
// was a visible share of a busy worker's time).
const camelNames = new Map<string, string>();
const snakeNames = new Map<string, string>();
const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const toSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function renamed(names: Map<string, string>, key: string, rename: (key: string) => string): string {
  let name = names.get(key);
  if (name === undefined) {
    name = rename(key);
    // Bounded: keys come from columns and entity fields, but a caller could pass a free-form object.
    if (names.size < 10_000) names.set(key, name);
  }
  return name;
}
