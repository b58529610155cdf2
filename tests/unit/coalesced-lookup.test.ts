import { expect, test } from 'bun:test';
import { coalescedLookup } from '../../adapters/postgres/coalesced-lookup.ts';

/** Lookups asked in one turn of the event loop are one read (adapters/postgres/coalesced-lookup.ts). */

test('lookups asked together are one read, each caller getting the row of its own key', async () => {
  const reads: string[][] = [];
  const lookup = coalescedLookup(async (keys) => {
    reads.push(keys);
    return new Map(keys.filter((k) => k !== 'missing').map((k) => [k, { key: k }]));
  });
  const answers = await Promise.all(['a', 'b', 'a', 'missing', 'c'].map((k) => lookup(k)));
  expect(answers).toEqual([{ key: 'a' }, { key: 'b' }, { key: 'a' }, undefined, { key: 'c' }]);
  expect(reads).toEqual([['a', 'b', 'missing', 'c']]);

  // A lookup asked after the read went out is read afresh: nothing is kept.
  expect(await lookup('a')).toEqual({ key: 'a' });
  expect(reads.length).toBe(2);
});

test('a failed read fails every lookup it carried; the next turn reads again', async () => {
  let fail = true;
  const lookup = coalescedLookup(async (keys) => {
    if (fail) throw new Error('database down');
    return new Map(keys.map((k) => [k, k.toUpperCase()]));
  });
  const failed = await Promise.allSettled([lookup('a'), lookup('b')]);
  expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  expect((failed[0] as PromiseRejectedResult).reason.message).toBe('database down');
  fail = false;
  expect(await lookup('a')).toBe('A');
});

test('more keys than a statement takes are read in parts', async () => {
  const reads: number[] = [];
  const lookup = coalescedLookup(
    async (keys) => {
      reads.push(keys.length);
      return new Map(keys.map((k) => [k, k]));
    },
    { maxKeys: 3 },
  );
  const keys = ['1', '2', '3', '4', '5', '6', '7'];
  expect(await Promise.all(keys.map((k) => lookup(k)))).toEqual(keys);
  expect(reads).toEqual([3, 3, 1]);
});
