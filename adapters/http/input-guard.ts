import { badRequest, excerpt } from '../../core/shared/errors.ts';

/**
 * Cheap refusals of hostile input before anything parses or stores it (issue 19, section 2).
 * JSON bodies of this API are shallow (a handful of levels); 32 leaves room for any real
 * payload while a body of 10,000 nested arrays is refused after scanning 33 characters.
 */
export const MAX_JSON_DEPTH = 32;

/** What the texts say: the part of the request, then why. */
export const NUL_PROBLEM = 'contains a NUL character (\\u0000), which is not accepted';
export const SURROGATE_PROBLEM = 'contains an unpaired UTF-16 surrogate (\\ud800-\\udfff), which is not accepted';

/**
 * NUL cannot be stored in Postgres text (nor `\u0000` in jsonb), and a lone surrogate is not a
 * character at all (jsonb refuses it, UTF-8 cannot encode it): no legitimate value carries one.
 */
export function textProblem(value: string): string | undefined {
  if (value.includes('\0')) return NUL_PROBLEM;
  if (!value.isWellFormed()) return SURROGATE_PROBLEM;
  return undefined;
}

const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * One pass over a JSON text before `JSON.parse`: refuses nesting deeper than MAX_JSON_DEPTH and
 * strings with NUL or unpaired surrogates (escaped or raw). Syntax is left to `JSON.parse`.
 */
export function jsonTextProblem(text: string): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!inString) {
      if (c === 0x22) inString = true;
      else if (c === 0x5b || c === 0x7b) {
        if (++depth > MAX_JSON_DEPTH) return `is nested deeper than ${MAX_JSON_DEPTH} levels`;
      } else if (c === 0x5d || c === 0x7d) depth--;
      else if (c === 0) return NUL_PROBLEM;
      continue;
    }
    if (c === 0x22) inString = false;
    else if (c === 0) return NUL_PROBLEM;
    else if (c >= 0xd800 && c <= 0xdfff) {
      // A raw pair is fine; anything else is a lone half.
      const next = text.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
      else return SURROGATE_PROBLEM;
    } else if (c === 0x5c) {
      if (text.charCodeAt(i + 1) !== 0x75) {
        i++;
        continue;
      }
      const hex = text.slice(i + 2, i + 6);
      if (!HEX4.test(hex)) return undefined; // invalid escape: JSON.parse says so
      const code = parseInt(hex, 16);
      i += 5;
      if (code === 0) return NUL_PROBLEM;
      if (code >= 0xdc00 && code <= 0xdfff) return SURROGATE_PROBLEM;
      if (code >= 0xd800 && code <= 0xdbff) {
        const low = text.charCodeAt(i + 1) === 0x5c && text.charCodeAt(i + 2) === 0x75 ? text.slice(i + 3, i + 7) : '';
        const lowCode = HEX4.test(low) ? parseInt(low, 16) : -1;
        if (lowCode < 0xdc00 || lowCode > 0xdfff) return SURROGATE_PROBLEM;
        i += 6;
      }
    }
  }
  return undefined;
}

/** A JSON text refused or parsed: depth, NUL and surrogates first, then syntax (400 in the standard shape). */
export function parseJsonText(text: string, where = 'body'): unknown {
  const problem = jsonTextProblem(text);
  if (problem) throw badRequest([`${where} ${problem}`]);
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('Request body is not valid JSON');
  }
}

/** Form fields (`a=1&b=2`) with a NUL or a lone surrogate after decoding: the first problem, or undefined. */
export function formTextProblem(text: string): string | undefined {
  for (const [key, value] of new URLSearchParams(text)) {
    const problem = textProblem(key) ?? textProblem(value);
    if (problem) return `body.${excerpt(key, 40)} ${problem}`;
  }
  return undefined;
}

/**
 * The path and query of a URL, percent-decoded: malformed escapes, invalid UTF-8 (an encoded
 * surrogate is one), NUL and lone surrogates are refused for every route in one place.
 */
export function urlProblem(url: string): string | undefined {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const rest = start < 0 ? '' : url.slice(start);
  if (!rest.includes('%')) return textProblem(rest) && `The URL ${textProblem(rest)}`;
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest.replace(/\+/g, ' '));
  } catch {
    return 'The URL has malformed percent-encoding or encodes bytes that are not UTF-8';
  }
  const problem = textProblem(decoded);
  return problem && `The URL ${problem}`;
}
