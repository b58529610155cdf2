import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { buildAudience, normalizePhone, personalise, placeholdersOf, recipientsFromCsv, type AudienceEntryStatus, type Placeholder, type RawRecipient } from '../../core/campaigns/audience.ts';

/**
 * Who a campaign goes to (core/campaigns/audience.ts). Issue 8 item 4: "dedupe of repeated numbers,
 * number normalization (E.164) with invalid numbers reported, not sent"; item 1: "uploaded CSV with
 * per-recipient variables". audience.ts: "numbers to E.164 digits, repeated numbers kept once (the
 * first occurrence, with its variables), numbers that are not phone numbers and recipients missing
 * a variable the message uses reported as invalid, opted-out numbers reported and left out".
 */

/** E.164 digits: a country code that does not start with 0, 7 to 15 digits in all. */
const e164 = fc
  .tuple(fc.integer({ min: 1, max: 9 }), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 6, maxLength: 14 }))
  .map(([first, rest]) => `${first}${rest.join('')}`);

/** The same number as people write it. */
function formatted(digits: string, style: { prefix: '' | '+' | '00'; separators: number[]; sep: string; parens: boolean; jid: boolean; pad: boolean }): string {
  let body = '';
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && style.separators.includes(i)) body += style.sep;
    body += digits[i];
  }
  if (style.parens && digits.length > 4) body = `${body.slice(0, 2)} (${body.slice(2, 4)}) ${body.slice(4)}`;
  let text = style.jid ? `${digits}@s.whatsapp.net` : `${style.prefix}${body}`;
  if (style.pad) text = `  ${text} `;
  return text;
}

const styleArb = fc.record({
  prefix: fc.constantFrom('' as const, '+' as const, '00' as const),
  separators: fc.array(fc.integer({ min: 1, max: 14 }), { maxLength: 4 }),
  sep: fc.constantFrom(' ', '-', '.', ' - '),
  parens: fc.boolean(),
  jid: fc.boolean(),
  pad: fc.boolean(),
});

const notANumber = fc.oneof(
  fc.constantFrom('', '   ', 'abc', '+', '00', '123456', '+1 23 45', '0123456789', '+0 11 9999 9999', '1234567890123456', 'phone: 5511999990001', '55 11 9999x0001', '+55 (11) 9999-000O'),
  fc.string().filter((s) => !/\d/.test(s)),
);

describe('normalizePhone', () => {
  test('the same number written in many formats (+55 (11) 9…, 0055…, spaces, dashes, dots, a WhatsApp JID) is one E.164 digit string', () => {
    fc.assert(
      fc.property(e164, fc.array(styleArb, { minLength: 1, maxLength: 5 }), (digits, styles) => {
        for (const style of styles) expect(normalizePhone(formatted(digits, style))).toBe(digits);
        // A number given as a JSON number too.
        if (digits.length <= 15) expect(normalizePhone(Number(digits))).toBe(digits);
      }),
    );
  });

  test('rejects what is not a phone number: letters, too short or too long, a leading 0 after the prefix, non-strings', () => {
    fc.assert(
      fc.property(notANumber, (text) => {
        expect(normalizePhone(text)).toBeNull();
      }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.constant(null), fc.constant(undefined), fc.boolean(), fc.object(), fc.array(fc.nat())), (value) => {
        expect(normalizePhone(value)).toBeNull();
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 16, maxLength: 25 }), fc.integer({ min: 1, max: 9 }), (rest, first) => {
        expect(normalizePhone(`+${first}${rest.join('')}`)).toBeNull();
      }),
    );
    fc.assert(
      fc.property(e164, fc.integer({ min: 0, max: 9 }), (digits, letterAt) => {
        // One digit replaced by a letter is not the number.
        const i = letterAt % digits.length;
        expect(normalizePhone(`+${digits.slice(0, i)}x${digits.slice(i + 1)}`)).toBeNull();
      }),
    );
  });
});

describe('buildAudience', () => {
  const VARS = ['name', 'city', 'code'];
  const entryArb = fc.record({
    phone: fc.oneof({ weight: 5, arbitrary: fc.nat({ max: 5 }) }, { weight: 1, arbitrary: fc.constant(-1) }),
    style: styleArb,
    invalid: notANumber,
    variables: fc.dictionary(fc.constantFrom(...VARS), fc.oneof(fc.constant(''), fc.constant('  '), fc.string({ minLength: 1, maxLength: 6 }), fc.integer().map(String))),
  });

  test('keeps each number once (its first occurrence), positions 0..n-1 in order, opted-out numbers OPTED_OUT, a missing variable without fallback INVALID', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(e164, { minLength: 6, maxLength: 6 }),
        fc.array(entryArb, { minLength: 1, maxLength: 30 }),
        fc.subarray([0, 1, 2, 3, 4, 5]),
        fc.array(fc.record({ name: fc.constantFrom(...VARS), fallback: fc.option(fc.constantFrom('friend', '', 'there')) })),
        (numbers, raw, optedIdx, used) => {
          const variablesUsed: Placeholder[] = [...new Map(used.map((p) => [p.name, p])).values()];
          const optedOut = new Set(optedIdx.map((i) => numbers[i]!));
          const input: RawRecipient[] = raw.map((r) => ({ phone: r.phone < 0 ? r.invalid : formatted(numbers[r.phone]!, r.style), variables: r.variables }));
          const audience = buildAudience(input, { optedOut, variablesUsed });

          // The expected list, from the description.
          const seen = new Set<string>();
          const expected: Array<{ phone: string; status: AudienceEntryStatus; variables: Record<string, string> }> = [];
          let duplicates = 0;
          raw.forEach((r) => {
            if (r.phone < 0) {
              expected.push({ phone: String(r.invalid).slice(0, 64), status: 'INVALID', variables: r.variables });
              return;
            }
            const phone = numbers[r.phone]!;
            if (seen.has(phone)) {
              duplicates += 1;
              return;
            }
            seen.add(phone);
            const missing = variablesUsed.some((p) => p.fallback === null && !(r.variables[p.name] ?? '').trim());
            expected.push({ phone, status: optedOut.has(phone) ? 'OPTED_OUT' : missing ? 'INVALID' : 'QUEUED', variables: r.variables });
          });
          expect(audience.duplicates).toBe(duplicates);
          expect(audience.entries.map((e) => e.position)).toEqual(expected.map((_, i) => i));
          expect(audience.entries.map((e) => ({ phone: e.phone, status: e.status, variables: e.variables }))).toEqual(expected);
          for (const e of audience.entries) expect(e.error === null).toBe(e.status === 'QUEUED');
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// CSV: a small writer (RFC 4180 quoting) and the reader under test.

function writeCsv(rows: string[][], delimiter: ',' | ';', newline: '\n' | '\r\n'): string {
  const cell = (c: string) => (c.includes(delimiter) || c.includes('"') || c.includes('\n') || c.includes('\r') || c.includes(',') || c.includes(';') ? `"${c.replace(/"/g, '""')}"` : c);
  return rows.map((row) => row.map(cell).join(delimiter)).join(newline);
}

const cellArb = fc.array(fc.constantFrom('a', 'B', 'é', ' ', ',', ';', '"', '\n', '\r\n', 'x y', '{{', '😀', '0', '|'), { maxLength: 8 }).map((parts) => parts.join(''));

describe('recipientsFromCsv', () => {
  test('round-trips random cells (commas, quotes, newlines, `;` delimiter, CRLF, a BOM) written by a CSV writer', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9_]{0,7}$/).filter((h) => !['phone', 'number', 'phone_number', 'phonenumber', 'to', 'whatsapp', 'mobile'].includes(h)), { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.array(fc.tuple(e164, fc.array(cellArb, { minLength: 4, maxLength: 4 })), { minLength: 1, maxLength: 12 }),
        fc.constantFrom(',' as const, ';' as const),
        fc.constantFrom('\n' as const, '\r\n' as const),
        fc.boolean(),
        fc.boolean(),
        (names, phoneAt, rows, delimiter, newline, bom, trailingNewline) => {
          const at = phoneAt % (names.length + 1);
          const header = [...names.slice(0, at), 'phone', ...names.slice(at)];
          // `;` files are told by their header row holding more `;` than `,`: give it two columns at least.
          fc.pre(delimiter === ',' || header.length >= 2);
          const table = rows.map(([phone, cells]) => {
            const values = names.map((_, i) => cells[i]!);
            return [...values.slice(0, at), `+${phone}`, ...values.slice(at)];
          });
          const text = (bom ? '\uFEFF' : '') + writeCsv([header, ...table], delimiter, newline) + (trailingNewline ? newline : '');
          const parsed = recipientsFromCsv(text);
          expect(parsed).toEqual(
            rows.map(([phone, cells]) => ({
              phone: `+${phone}`,
              variables: Object.fromEntries(names.map((n, i) => [n, cells[i]!.trim()])),
            })),
          );
        },
      ),
      { numRuns: 400 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Personalisation

describe('personalise', () => {
  const nameArb = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_ ]{0,8}[A-Za-z0-9_]$|^[A-Za-z]$/);
  const part = fc.oneof(
    fc.record({ kind: fc.constant('text' as const), text: fc.stringMatching(/^[^{}]{0,12}$/) }),
    fc.record({
      kind: fc.constant('slot' as const),
      name: nameArb,
      fallback: fc.option(fc.stringMatching(/^[^{}]{0,8}$/)),
      pad: fc.constantFrom('', ' ', '  '),
    }),
  );

  test('replaces every placeholder with the value, or its fallback (trimmed) when the value is missing or blank', () => {
    fc.assert(
      fc.property(
        fc.array(part, { maxLength: 8 }),
        fc.dictionary(nameArb, fc.oneof(fc.constant(''), fc.constant(' '), fc.stringMatching(/^[^{}]{1,8}$/))),
        (parts, variables) => {
          // Neighbouring texts must not glue braces into a new placeholder: texts hold none.
          const template = parts.map((p) => (p.kind === 'text' ? p.text : `{{${p.pad}${p.name}${p.pad}${p.fallback === null ? '' : `|${p.fallback}`}}}`)).join('');
          const expected = parts
            .map((p) => {
              if (p.kind === 'text') return p.text;
              const value = variables[p.name];
              return value !== undefined && value.trim() !== '' ? value : (p.fallback ?? '').trim();
            })
            .join('');
          const content = { text: template, nested: [{ caption: template }] };
          const out = personalise(content, variables);
          expect(out).toEqual({ text: expected, nested: [{ caption: expected }] });
          // placeholdersOf sees each name once; a fallback anywhere makes it optional.
          const slots = parts.filter((p) => p.kind === 'slot');
          const found = placeholdersOf(content);
          expect(found.map((p) => p.name).sort()).toEqual([...new Set(slots.map((p) => p.name))].sort());
          for (const p of found) expect(p.fallback === null).toBe(slots.filter((s) => s.name === p.name).every((s) => s.fallback === null));
        },
      ),
      { numRuns: 400 },
    );
  });
});
