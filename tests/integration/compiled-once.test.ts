import { afterAll, beforeAll, expect, test } from 'bun:test';
import { sql, type Kysely } from 'kysely';
import { compiledOnce } from '../../adapters/postgres/compiled-once.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/** Queries compiled once must behave exactly like the same query built on every call. */
let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
  for (const [email, name] of [['a@example.com', 'Ann'], ['b@example.com', 'Bob'], ['c@example.com', 'Cy']]) {
    await database.db.insertInto('users').values({ id: crypto.randomUUID(), email: email!, name: name!, password_hash: null }).execute();
  }
});
afterAll(() => database.close());

test('later calls run the cached statement with their own arguments, also where one argument fills several places', async () => {
  const byEmailOrName = compiledOnce((db: Kysely<any>, email: string, limit: number) =>
    db.selectFrom('users').select('name').where((eb) => eb.or([eb('email', '=', email), eb('name', '=', email)])).orderBy('name').limit(limit),
  );
  expect((await byEmailOrName(database.db, 'a@example.com', 5)).rows).toEqual([{ name: 'Ann' }]);
  expect((await byEmailOrName(database.db, 'Bob', 5)).rows).toEqual([{ name: 'Bob' }]);
  expect((await byEmailOrName(database.db, 'nobody', 5)).rows).toEqual([]);
});

test('runs inside the transaction it is given', async () => {
  const rename = compiledOnce((db: Kysely<any>, email: string, name: string) => db.updateTable('users').set({ name }).where('email', '=', email));
  await expect(
    database.db.transaction().execute(async (trx) => {
      expect(Number((await rename(trx, 'c@example.com', 'Changed')).numAffectedRows)).toBe(1);
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  const row = await database.db.selectFrom('users').select('name').where('email', '=', 'c@example.com').executeTakeFirstOrThrow();
  expect(row.name).toBe('Cy');
});

test('an argument that would become SQL text instead of a parameter is refused', async () => {
  const inlined = compiledOnce((db: Kysely<any>, column: string) => db.selectFrom('users').select(sql.ref(column).as('x')));
  await expect(inlined(database.db, 'email')).rejects.toThrow('every argument must become a query parameter');
});
