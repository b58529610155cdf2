import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { mentionedUserIds, mentionMarkup, type MentionableMember } from '../../core/helpdesk/notifications/mentions.ts';

/**
 * @mentions in private notes (issue 7 item 6; syntax ours, core/helpdesk/notifications/mentions.ts):
 * `@[Shown Name](user:<userId>)` and `@<email>`. The parser never mentions anyone who is not a
 * member, mentions each member once, in order of first appearance, whatever text surrounds them.
 * Checked against a model: notes are built from tokens whose meaning is known by construction.
 */

const alnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split(''));
const localPart = fc
  .tuple(alnum, fc.string({ unit: fc.constantFrom(...'abcxyz019._+-'.split('')), maxLength: 8 }))
  .map(([first, rest]) => first + rest);
const email = fc
  .tuple(localPart, fc.string({ unit: alnum, minLength: 1, maxLength: 8 }), fc.constantFrom('com', 'org', 'io', 'com.br', 'co.uk'))
  .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);

const members = fc.uniqueArray(fc.record({ userId: fc.uuid(), email }), { maxLength: 6, selector: (m) => m.userId }).filter((list) => new Set(list.map((m) => m.email)).size === list.length);

/** Any case of an email: emails are compared case-insensitively. */
const recase = (text: string, flips: boolean[]) => [...text].map((c, i) => (flips[i % Math.max(1, flips.length)] ? c.toUpperCase() : c)).join('');

/** A shown name: anything but `]` and line breaks (it may hold `@`, brackets, emails…). */
const shownName = fc.string({ maxLength: 20 }).map((s) => s.replace(/[\]\n\r]/g, ''));
/** Text between mentions: no `@`, so it can hold no mention. */
const filler = fc.string({ maxLength: 20 }).map((s) => s.replace(/@/g, ''));
const separator = fc.constantFrom(' ', ', ', '\n', '. ', ' (', ') ', '! ', ': ');

type Token = { text: string; mentions: string | null };

function tokens(list: MentionableMember[]): fc.Arbitrary<Token> {
  const ofMember = list.length === 0 ? [] : [
    fc.tuple(fc.constantFrom(...list), shownName).map(([m, name]) => ({ text: `@[${name}](user:${m.userId})`, mentions: m.userId })),
    fc.tuple(fc.constantFrom(...list), fc.array(fc.boolean(), { minLength: 1, maxLength: 5 })).map(([m, flips]) => ({ text: `@${recase(m.email, flips)}`, mentions: m.userId })),
  ];
  const known = new Set(list.map((m) => m.userId));
  const emails = new Set(list.map((m) => m.email.toLowerCase()));
  return fc.oneof(
    ...ofMember,
    // Strangers: an id or an email that is nobody's here.
    fc.tuple(fc.uuid().filter((id) => !known.has(id)), shownName).map(([id, name]) => ({ text: `@[${name}](user:${id})`, mentions: null })),
    email.filter((e) => !emails.has(e.toLowerCase())).map((e) => ({ text: `@${e}`, mentions: null })),
    // An email written without a leading @ (or a member's, inside a word) is no mention.
    fc.constantFrom(...(list.length > 0 ? list.map((m) => m.email) : ['x@y.com'])).map((e) => ({ text: `mail ${e} or x${'@' + e}`, mentions: null })),
    filler.map((text) => ({ text, mentions: null })),
  );
}

const note = members.chain((list) => fc.tuple(fc.constant(list), fc.array(fc.tuple(tokens(list), separator), { maxLength: 12 })));

describe('reading mentions in a note', () => {
  test('exactly the members the note names, each once, in order of first appearance', () => {
    fc.assert(
      fc.property(note, ([list, parts]) => {
        const text = parts.map(([token, sep]) => token.text + sep).join('');
        const expected: string[] = [];
        for (const [token] of parts) if (token.mentions !== null && !expected.includes(token.mentions)) expected.push(token.mentions);
        expect(mentionedUserIds(text, list)).toEqual(expected);
      }),
    );
  });

  test('whatever the text, only members, never twice', () => {
    fc.assert(
      fc.property(members, fc.string({ maxLength: 200 }), (list, text) => {
        const found = mentionedUserIds(text, list);
        const ids = new Set(list.map((m) => m.userId));
        for (const id of found) expect(ids.has(id)).toBe(true);
        expect(new Set(found).size).toBe(found.length);
      }),
    );
  });

  test('nobody is mentioned when nobody is a member', () => {
    fc.assert(
      fc.property(note, ([list, parts]) => {
        const text = parts.map(([token, sep]) => token.text + sep).join('');
        expect(mentionedUserIds(text, [])).toEqual([]);
        // A member left out of the list is not mentioned, the others still are.
        if (list.length > 0) expect(mentionedUserIds(text, list.slice(1))).not.toContain(list[0]!.userId);
      }),
    );
  });

  test('the canonical markup of any member, under any name, reads back as that member alone', () => {
    fc.assert(
      fc.property(members.filter((l) => l.length > 0), fc.string({ maxLength: 30 }), filler, filler, (list, name, before, after) => {
        const member = list[0]!;
        const text = `${before} ${mentionMarkup({ userId: member.userId, name })} ${after}`;
        expect(mentionedUserIds(text, list)).toEqual([member.userId]);
      }),
    );
  });
});
