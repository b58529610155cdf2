/**
 * Mentions in private notes as the pane writes and shows them: the canonical form
 * `@[Name](user:<id>)` of core/helpdesk/notifications/mentions.ts (that module is the service's
 * and reaches server code, so the browser keeps this copy of its two small rules).
 */

export type NotePart = { text: string } | { mention: string; userId: string };

const CANONICAL = /@\[([^\]\n]*)\]\(user:([^)\s]*)\)/g;

/** The canonical markup of a mention; brackets and line breaks in the shown name are dropped. */
export function mentionMarkup(member: { userId: string; name: string }): string {
  return `@[${member.name.replace(/[[\]\r\n]/g, '').trim()}](user:${member.userId})`;
}

/** A note's text cut into plain runs and mentions, in order. */
export function noteParts(content: string): NotePart[] {
  const parts: NotePart[] = [];
  let from = 0;
  for (const match of content.matchAll(CANONICAL)) {
    if (match.index > from) parts.push({ text: content.slice(from, match.index) });
    parts.push({ mention: match[1]!, userId: match[2]! });
    from = match.index + match[0].length;
  }
  if (from < content.length) parts.push({ text: content.slice(from) });
  return parts;
}

/** The `@word` being typed just before the caret, if any (where a mention picker opens). */
export function mentionQuery(text: string, caret: number): { start: number; query: string } | undefined {
  const match = /(^|\s)@([^\s@[\]]*)$/.exec(text.slice(0, caret));
  if (!match) return undefined;
  return { start: caret - match[2]!.length - 1, query: match[2]! };
}
