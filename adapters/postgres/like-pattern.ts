/**
 * The LIKE/ILIKE pattern of text containing `search` as typed: its own `%`, `_` and `\` match
 * themselves (escaped with Postgres's default escape character), not any text.
 */
export function containing(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
