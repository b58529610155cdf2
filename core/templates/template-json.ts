/** Readers of template JSON shared by the base checks and the plugins' rules: they never throw. */

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim().length > 0;
}

/** The `{{n}}` numbers of a text, in order of appearance. */
export function variablesOf(text: unknown): number[] {
  if (typeof text !== 'string') return [];
  return [...text.matchAll(/\{\{\s*(\d+)\s*\}\}/g)].map((m) => Number(m[1]));
}
