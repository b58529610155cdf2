import { badRequest, excerpt } from '../../shared/errors.ts';

/**
 * Conversation labels as sets, and the deltas between them. Spec 6.5: `conversation.labels_changed`
 * carries "`addedLabelIds[]`, `removedLabelIds[]` (the delta, not the final list)".
 *
 * A label is identified by its trimmed, case-insensitive text: "Urgent", " urgent " and "URGENT"
 * are one label, spelt as it was first seen (in a set: its first occurrence; in a delta from
 * `before` to `after`: the spelling already in `before` wins, so a change of case alone is no
 * delta). A valid label is 1 to 100 characters (code points) after trimming and has no comma.
 */
export const LABEL_MAX_LENGTH = 100;

export interface LabelDelta {
  added: string[];
  removed: string[];
}

/** The identity of a label: trimmed and lower-cased. */
export function labelKey(label: string): string {
  return label.trim().toLowerCase();
}

/** The reason a (trimmed) label is invalid, or null. */
function problem(raw: string): string | null {
  const label = raw.trim();
  const length = [...label].length;
  if (length < 1 || length > LABEL_MAX_LENGTH) return `label ${JSON.stringify(excerpt(raw))} must be 1 to ${LABEL_MAX_LENGTH} characters`;
  if (label.includes(',')) return `label ${JSON.stringify(excerpt(raw))} must not contain a comma`;
  return null;
}

/**
 * The labels trimmed, validated and made unique case-insensitively (first spelling kept, order of
 * first appearance kept). Throws one 400 listing every bad label.
 */
export function normaliseLabels(labels: readonly string[]): string[] {
  const problems = labels.map(problem).filter((p): p is string => p !== null);
  if (problems.length > 0) throw badRequest(problems);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of labels) {
    const key = labelKey(raw);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(raw.trim());
  }
  return out;
}

/** What to emit when a conversation's labels go from `before` to `after`. */
export function labelDelta(before: readonly string[], after: readonly string[]): LabelDelta {
  const old = normaliseLabels(before);
  const next = normaliseLabels(after);
  const oldKeys = new Set(old.map(labelKey));
  const nextKeys = new Set(next.map(labelKey));
  return {
    added: next.filter((l) => !oldKeys.has(labelKey(l))),
    removed: old.filter((l) => !nextKeys.has(labelKey(l))),
  };
}

/** The set after a delta: removals first, then additions not already present (appended). */
export function applyLabelDelta(set: readonly string[], delta: LabelDelta): string[] {
  const removed = new Set(normaliseLabels(delta.removed).map(labelKey));
  const kept = normaliseLabels(set).filter((l) => !removed.has(labelKey(l)));
  return normaliseLabels([...kept, ...normaliseLabels(delta.added)]);
}

/** Whether two label lists hold the same labels (by identity, ignoring order and spelling). */
export function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  const ka = new Set(normaliseLabels(a).map(labelKey));
  const kb = new Set(normaliseLabels(b).map(labelKey));
  return ka.size === kb.size && [...ka].every((k) => kb.has(k));
}
