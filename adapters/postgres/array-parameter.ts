/**
 * An array of text parameters as Postgres's array literal (`{"a","b",NULL}`), written by the
 * native JSON encoder: for well-formed text without control characters, JSON's quoting of a
 * string (`"`, `\` escaped by a backslash) is exactly an array element's. Bun's client quotes each
 * element with a regular expression in JavaScript instead; for the JSON payloads of a busy
 * server's event and message arrays that cost it about a twentieth of its time. Undefined when
 * the array holds anything else, which is then left to the client.
 */
export function textArrayLiteral(values: readonly unknown[]): string | undefined {
  for (const value of values) {
    if (value === null) continue;
    if (typeof value !== 'string' || CONTROL_CHARACTER.test(value) || !value.isWellFormed()) return undefined;
  }
  const json = JSON.stringify(values);
  return `{${json.slice(1, -1)}}`;
}

/** What JSON writes as `\n` or `\u001f` (as it does a lone surrogate), where an array literal wants the character itself. */
const CONTROL_CHARACTER = /[\u0000-\u001f]/;
