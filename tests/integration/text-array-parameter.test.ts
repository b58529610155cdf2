import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { textArrayLiteral } from '../../adapters/postgres/array-parameter.ts';
import { openTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';

/**
 * Arrays of text (ids, JSON payloads) go to Bun's client as Postgres array literals written by
 * JSON.stringify (adapters/postgres/array-parameter.ts). Whatever the text, Postgres must read
 * back exactly the array that was sent: quotes, backslashes, commas, braces, `NULL` as a word,
 * empty strings, non-Latin text and emoji; control characters and lone surrogates are left to the client.
 */
describe(`text arrays as parameters (${onPostgres ? 'Postgres, through the Bun client' : 'PGlite'})`, () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  // Text Postgres can hold: no NUL, no lone surrogate.
  const storable = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\u0000') && s.isWellFormed());
  const texts = fc.array(fc.option(fc.oneof(storable, fc.constantFrom('NULL', 'null', '', ' ', '"', '\\', '{a,b}', '{"x": "y\\\\z"}')), { nil: null }), { maxLength: 12 });

  test('the literal reads back as the array it was written from, or is left to the client', async () => {
    await fc.assert(
      fc.asyncProperty(texts, async (values) => {
        const literal = textArrayLiteral(values);
        if (literal === undefined) {
          expect(values.some((v) => v !== null && /[\u0000-\u001f]/.test(v))).toBe(true);
          return;
        }
        const { rows } = await sql<{ back: Array<string | null> }>`select ${literal}::text[] as back`.execute(database.db);
        expect(rows[0]!.back).toEqual(values);
      }),
      { numRuns: 200 },
    );
  });

  test('an array parameter of the service’s statements round-trips, control characters and emoji included', async () => {
    await fc.assert(
      fc.asyncProperty(texts, async (values) => {
        const { rows } = await sql<{ back: Array<string | null> }>`select ${values}::text[] as back`.execute(database.db);
        expect(rows[0]!.back).toEqual(values);
      }),
      { numRuns: 200 },
    );
  });

  test('only arrays of text or null are written here', () => {
    expect(textArrayLiteral(['a', null, 'b "c" \\ d'])).toBe('{"a",null,"b \\"c\\" \\\\ d"}');
    expect(textArrayLiteral([])).toBe('{}');
    expect(textArrayLiteral([1, 2])).toBeUndefined();
    expect(textArrayLiteral([new Date(0)])).toBeUndefined();
    expect(textArrayLiteral(['line\nbreak'])).toBeUndefined();
    expect(textArrayLiteral(['\ud83d\ude00'])).toBe('{"\ud83d\ude00"}');
    expect(textArrayLiteral(['lone \ud83d'])).toBeUndefined();
  });

  test('uuid and timestamp arrays cast from the literal', async () => {
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    const times = ['2026-11-28T08:00:00.000Z', '2026-11-28T08:00:01.500Z'];
    const { rows } = await sql<{ id: string; at: Date }>`select id, at from unnest(${ids}::uuid[], ${times}::timestamptz[]) as u(id, at)`.execute(database.db);
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(rows.map((r) => new Date(r.at).toISOString())).toEqual(times);
  });
});
