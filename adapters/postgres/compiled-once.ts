import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';

/**
 * A Kysely query of fixed shape, compiled once and then run with new parameters. Building and
 * compiling a query took a third of a busy server's time; hot queries (authentication, the send
 * path) compile at first use instead of on every request.
 *
 * `build` must turn every argument into a query parameter (never into SQL text): it is called
 * once with placeholder arguments, and each later call fills the placeholders' positions.
 */
export function compiledOnce<Args extends unknown[], Row>(
  build: (db: Kysely<any>, ...args: Args) => Compilable<Row>,
): (db: Kysely<any>, ...args: Args) => Promise<QueryResult<Row>> {
  let cached: { sql: string; slots: Array<number | { fixed: unknown }> } | undefined;
  return async (db, ...args) => {
    if (!cached) {
      const markers = args.map((_, i) => `\u0000compiled-once-argument-${i}\u0000`);
      const compiled = build(db, ...(markers as unknown as Args)).compile();
      const slots = compiled.parameters.map((value) => {
        const index = markers.indexOf(value as string);
        return index >= 0 ? index : { fixed: value };
      });
      const used = new Set(slots.filter((s): s is number => typeof s === 'number'));
      if (used.size !== args.length) throw new Error('compiledOnce: every argument must become a query parameter');
      cached = { sql: compiled.sql, slots };
    }
    const parameters = cached.slots.map((slot) => (typeof slot === 'number' ? args[slot] : slot.fixed));
    return db.executeQuery<Row>(CompiledQuery.raw(cached.sql, parameters) as CompiledQuery<Row>);
  };
}
