import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { decodeCursor, encodeCursor, MAX_COUNTED, readConversationQuery, searchTerms, type Keyset } from '../../core/helpdesk/conversations/inbox-query.ts';
import { DomainError } from '../../core/shared/errors.ts';

/**
 * The inbox list's query string (core/helpdesk/conversations/inbox-query.ts): cursors are opaque
 * but round-trip exactly, never decode from junk, and search words carry no tsquery syntax.
 */

const keyset = fc.oneof(
  fc.record({ sort: fc.constantFrom('last_activity' as const, 'created' as const), key: fc.date({ noInvalidDate: true }).map((d) => [d.toISOString()]) }),
  fc.record({ sort: fc.constant('priority' as const), key: fc.tuple(fc.integer({ min: 0, max: 4 }), fc.date({ noInvalidDate: true }).map((d) => d.toISOString())) }),
  fc.record({ sort: fc.constant('waiting' as const), key: fc.option(fc.date({ noInvalidDate: true }).map((d) => d.toISOString())).map((k) => [k]) }),
);

describe('inbox list query', () => {
  test('a cursor decodes to the keyset it encodes, and is URL-safe', () => {
    fc.assert(
      fc.property(keyset, fc.uuid(), fc.integer({ min: 1, max: 100_000 }), (k, id, page) => {
        const original = { ...k, id, page } as Keyset;
        const cursor = encodeCursor(original);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(decodeCursor(cursor)).toEqual(original);
      }),
    );
  });

  test('junk is never a cursor', () => {
    fc.assert(fc.property(fc.string(), (junk) => expect(decodeCursor(junk)).toBeUndefined()));
    expect(decodeCursor(btoa(JSON.stringify(['created', ['not a date'], crypto.randomUUID(), 1])))).toBeUndefined();
    expect(decodeCursor(btoa(JSON.stringify(['created', [new Date().toISOString()], 'not-a-uuid', 1])))).toBeUndefined();
  });

  test('search words are letters and digits only; a phone number is its digits', () => {
    fc.assert(fc.property(fc.string(), (s) => searchTerms(s).forEach((w) => expect(w).toMatch(/^[\p{L}\p{N}]+$/u))));
    expect(searchTerms('+55 (11) 99999-0000')).toEqual(['5511999990000']);
    expect(searchTerms('Ana.Souza@Example.com')).toEqual(['ana', 'souza', 'example', 'com']);
    expect(searchTerms("a:* & !b | 'c'")).toEqual(['a', 'b', 'c']);
  });

  test('every broken rule is reported at once', () => {
    try {
      readConversationQuery({ view: 'x', sort: 'y', status: 'OPEN,NOPE', createdFrom: 'soon', limit: '0' });
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).messages).toHaveLength(5);
    }
    expect(readConversationQuery({})).toMatchObject({ view: 'all', sort: 'last_activity', limit: 10, page: 1, offset: 0, countUpTo: undefined });
    expect(readConversationQuery({ limit: '5' })).toMatchObject({ limit: 5, page: 1, countUpTo: MAX_COUNTED });
  });
});
