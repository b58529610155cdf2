import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Database } from '../../adapters/postgres/schema.ts';

/** The database, recording every statement run through it (the compiled-once statements run as `executeQuery`). */
export function capturing(db: Kysely<Database>, statements: CompiledQuery[]): Kysely<Database> {
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'executeQuery') {
        return (query: CompiledQuery) => {
          statements.push(query);
          return target.executeQuery(query);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * The plan Postgres keeps for `statement` once it plans it for any parameters: a pooled prepared
 * statement ends up with it after a few runs. Parameters are given as literals of the statement's
 * own run (dates, numbers, text, arrays of text). With `run`, the statement is executed.
 */
export async function genericPlan(db: Kysely<Database>, statement: CompiledQuery, options: { run?: boolean } = {}): Promise<string> {
  return db.connection().execute(async (conn) => {
    await sql`set plan_cache_mode = force_generic_plan`.execute(conn);
    try {
      await conn.executeQuery(CompiledQuery.raw(`prepare planned as ${statement.sql}`));
      // `run`: executed (EXPLAIN ANALYZE, without costs), so that the plan shows which parts ran.
      const explain = options.run ? 'explain (analyze, costs off, timing off, summary off)' : 'explain';
      const plan = await conn.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`${explain} execute planned(${statement.parameters.map(literal).join(', ')})`));
      return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await sql`deallocate all`.execute(conn);
      await sql`reset plan_cache_mode`.execute(conn);
    }
  });
}

function literal(value: unknown): string {
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `'{${value.map((v) => `"${String(v)}"`).join(',')}}'`;
  return `'${String(value).replaceAll("'", "''")}'`;
}
