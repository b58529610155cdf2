import { afterAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { openDatabase } from '../../adapters/postgres/database.ts';
import { BASE_MIGRATIONS, migrate } from '../../adapters/postgres/migrator.ts';
import { tokenLookupByHash } from '../../adapters/postgres/repositories/api-token-store.ts';
import { freshDatabase, onPostgres } from '../support/database.ts';

/**
 * Every request with an API key looks its token up (the lookups of one turn of the event loop
 * together, coalesced-lookup.ts). Postgres planned the array form of that statement anew on
 * every run, a tenth of a millisecond each: more than the lookup itself. A turn's lone key
 * (every request with the same key) goes by an equality, whose generic plan Postgres keeps.
 */
describe.skipIf(!onPostgres)('authentication by API key keeps its plan (Postgres only: PGlite prepares nothing)', () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  test('one key a turn: a generic plan after the first runs; several keys: each gets its own token', async () => {
    const fresh = await freshDatabase(process.env.TEST_DATABASE_URL!);
    drops.push(fresh.drop);
    // One connection: its prepared statements are the ones this test reads.
    const database = await openDatabase({ url: fresh.url, dataDir: 'memory://', poolSize: 1 });
    try {
      await migrate(database.db, [BASE_MIGRATIONS]);
      const tokens = await seedTokens(database.db, 2);
      const lookup = tokenLookupByHash(database.db);

      for (let i = 0; i < 12; i++) expect((await lookup(tokens[0]!.hash))?.id).toBe(tokens[0]!.id);
      const plans = await sql<{ generic: number; custom: number }>`select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement like ${'%from "api_tokens"%secret_hash%'}`.execute(database.db);
      expect(plans.rows).toHaveLength(1);
      expect(plans.rows[0]!.generic).toBeGreaterThan(0);

      // Keys asked in the same turn are read together, each answered with its own token (or none).
      const [a, b, none] = await Promise.all([lookup(tokens[0]!.hash), lookup(tokens[1]!.hash), lookup('0'.repeat(64))]);
      expect([a?.id, b?.id, none]).toEqual([tokens[0]!.id, tokens[1]!.id, undefined]);
      expect(a?.creatorRoles).toEqual(['OWNER']);
    } finally {
      await database.close();
    }
  });
});

/** A workspace, its owner and `count` tokens of theirs, by hash. */
async function seedTokens(db: Parameters<typeof tokenLookupByHash>[0], count: number): Promise<Array<{ id: string; hash: string }>> {
  const workspaceId = crypto.randomUUID();
  const userId = crypto.randomUUID();
  await db.insertInto('workspaces').values({ id: workspaceId, name: 'Plans', is_personal: false, plan: 'PRO' }).execute();
  await db.insertInto('users').values({ id: userId, email: 'plans@example.com', name: 'Plans', password_hash: null }).execute();
  await db.insertInto('memberships').values({ workspace_id: workspaceId, user_id: userId, roles: ['OWNER'] }).execute();
  const tokens = Array.from({ length: count }, () => ({ id: crypto.randomUUID(), hash: new Bun.CryptoHasher('sha256').update(crypto.randomUUID()).digest('hex') }));
  for (const t of tokens) {
    await db.insertInto('api_tokens').values({ id: t.id, workspace_id: workspaceId, user_id: userId, name: 'plans', secret_hash: t.hash, token_last4: t.hash.slice(-4), last_used_at: null }).execute();
  }
  return tokens;
}
