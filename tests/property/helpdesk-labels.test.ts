import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { applyLabelDelta, LABEL_MAX_LENGTH, labelDelta, labelKey, normaliseLabels, sameLabels } from '../../core/helpdesk/labels/label-sets.ts';
import { DomainError, excerpt } from '../../core/shared/errors.ts';

/**
 * Conversation label sets and deltas.
 *
 * Spec 6.5: "| conversation.labels_changed | `conversationId`, `inboxId`, `addedLabelIds[]`,
 * `removedLabelIds[]` (the delta, not the final list), `actorUserId` |".
 * Issue 6: "labels (delta events)"; Tests: "label deltas (applying the emitted deltas to the old
 * set always gives the new set)".
 * Ours: labels are trimmed, identified case-insensitively (first spelling kept), 1–100 characters,
 * no commas; a bad list is refused with one 400 naming every bad label.
 */

/** A valid label: 1–8 visible characters from a small alphabet (mixed case, so duplicates by case occur). */
const validLabel = fc
  .tuple(fc.constantFrom('', ' ', '  '), fc.string({ unit: fc.constantFrom('a', 'A', 'b', 'B', 'c', '-', 'é', 'É', ' '), minLength: 1, maxLength: 8 }), fc.constantFrom('', ' '))
  .filter(([, core]) => core.trim().length > 0)
  .map(([pre, core, post]) => pre + core + post);
const labelList = fc.array(validLabel, { maxLength: 12 });

const keys = (list: string[]) => list.map(labelKey);

describe('normalising a label list', () => {
  test('trimmed, unique case-insensitively, first spelling and order kept', () => {
    fc.assert(
      fc.property(labelList, (list) => {
        const out = normaliseLabels(list);
        for (const l of out) expect(l).toBe(l.trim());
        expect(new Set(keys(out)).size).toBe(out.length);
        // Every input label is represented, by its first spelling, in order of first appearance.
        const firsts: string[] = [];
        const seen = new Set<string>();
        for (const l of list) {
          if (seen.has(l.trim().toLowerCase())) continue;
          seen.add(l.trim().toLowerCase());
          firsts.push(l.trim());
        }
        expect(out).toEqual(firsts);
        // Idempotent.
        expect(normaliseLabels(out)).toEqual(out);
      }),
    );
  });

  test('bad labels are refused with a 400 listing every bad one', () => {
    fc.assert(
      fc.property(
        labelList,
        fc.array(
          fc.oneof(
            fc.constantFrom('', '   ', '\t'),
            fc.tuple(validLabel, validLabel).map(([a, b]) => `${a},${b}`),
            fc.integer({ min: LABEL_MAX_LENGTH + 1, max: LABEL_MAX_LENGTH + 20 }).map((n) => 'x'.repeat(n)),
          ),
          { minLength: 1, maxLength: 5 },
        ),
        fc.nat(),
        (good, bad, seed) => {
          const entries = good.map((label) => ({ label, bad: false }));
          bad.forEach((b, i) => entries.splice((seed + i) % (entries.length + 1), 0, { label: b, bad: true }));
          const list = entries.map((e) => e.label);
          const badInOrder = entries.filter((e) => e.bad).map((e) => e.label);
          let error: unknown;
          try {
            normaliseLabels(list);
          } catch (e) {
            error = e;
          }
          expect(error).toBeInstanceOf(DomainError);
          expect((error as DomainError).kind).toBe('invalid_input');
          const messages = (error as DomainError).messages ?? [];
          expect(messages).toHaveLength(bad.length);
          // One message per bad label, in list order, quoting it (at most a short prefix of a long one).
          badInOrder.forEach((b, i) => expect(messages[i]).toContain(JSON.stringify(excerpt(b))));
        },
      ),
    );
  });

  test('the limits: 100 characters pass, 101 fail; a comma fails; whitespace around does not count', () => {
    expect(normaliseLabels([` ${'é'.repeat(LABEL_MAX_LENGTH)} `])).toEqual(['é'.repeat(LABEL_MAX_LENGTH)]);
    expect(() => normaliseLabels(['y'.repeat(LABEL_MAX_LENGTH + 1)])).toThrow(DomainError);
    expect(() => normaliseLabels(['vip,urgent'])).toThrow(DomainError);
    expect(() => normaliseLabels(['  '])).toThrow(DomainError);
    expect(normaliseLabels(['Urgent', ' urgent', 'URGENT ', 'vip'])).toEqual(['Urgent', 'vip']);
  });
});

describe('label deltas', () => {
  test('applying the emitted deltas to the old set always gives the new set (issue 6)', () => {
    fc.assert(
      fc.property(labelList, labelList, (before, after) => {
        const delta = labelDelta(before, after);
        const result = applyLabelDelta(before, delta);
        expect(sameLabels(result, after)).toBe(true);
        expect(new Set(keys(result))).toEqual(new Set(keys(normaliseLabels(after))));
        // Labels kept from the old set keep their old spelling; new ones come as spelt in `after`.
        const old = new Map(normaliseLabels(before).map((l) => [labelKey(l), l]));
        const next = new Map(normaliseLabels(after).map((l) => [labelKey(l), l]));
        for (const l of result) expect(l).toBe(old.get(labelKey(l)) ?? next.get(labelKey(l))!);
      }),
      { numRuns: 1000 },
    );
  });

  test('the delta is minimal: added only new labels, removed only gone ones, disjoint, none when nothing changed', () => {
    fc.assert(
      fc.property(labelList, labelList, (before, after) => {
        const delta = labelDelta(before, after);
        const b = new Set(keys(normaliseLabels(before)));
        const a = new Set(keys(normaliseLabels(after)));
        expect(new Set(keys(delta.added))).toEqual(new Set([...a].filter((k) => !b.has(k))));
        expect(new Set(keys(delta.removed))).toEqual(new Set([...b].filter((k) => !a.has(k))));
        expect(keys(delta.added).length).toBe(new Set(keys(delta.added)).size);
        expect(keys(delta.removed).length).toBe(new Set(keys(delta.removed)).size);
        expect(labelDelta(before, before)).toEqual({ added: [], removed: [] });
        // A change of case alone is no delta (same label).
        expect(labelDelta(before, before.map((l) => l.toUpperCase()))).toEqual({ added: [], removed: [] });
      }),
    );
  });

  test('a sequence of edits: replaying every emitted delta from the first set gives the last set', () => {
    fc.assert(
      fc.property(fc.array(labelList, { minLength: 1, maxLength: 8 }), (sets) => {
        let replayed = normaliseLabels(sets[0]!);
        for (let i = 1; i < sets.length; i++) replayed = applyLabelDelta(replayed, labelDelta(sets[i - 1]!, sets[i]!));
        expect(sameLabels(replayed, sets.at(-1)!)).toBe(true);
      }),
    );
  });

  test('applyLabelDelta is idempotent for an emitted delta', () => {
    fc.assert(
      fc.property(labelList, labelList, (before, after) => {
        const delta = labelDelta(before, after);
        const once = applyLabelDelta(before, delta);
        expect(applyLabelDelta(once, delta)).toEqual(once);
      }),
    );
  });
});
