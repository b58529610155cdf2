/** Small readers shared by the carousel checks: they never throw, whatever the JSON holds. */

import { excerpt } from '../shared/errors.ts';
import { isObject, type Json } from '../templates/template-json.ts';
export { isObject, nonEmptyString, variablesOf, type Json } from '../templates/template-json.ts';

/** The bounds of spec 8 ("Carousel | 2 to 10 cards, up to 2 buttons per card"). */
export const MIN_CARDS = 2;
export const MAX_CARDS = 10;
export const MAX_BUTTONS = 2;

/** How a value reads in a message: `"quick_reply"`, `3`, `undefined`. */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(excerpt(value));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/**
 * A type name in the wrong casing: `header` where `HEADER` is wanted (definition) or the
 * reverse (send). Answers the name in the right casing, or undefined when it is not a casing slip.
 */
function casingSlip(value: unknown, allowed: readonly string[], upper: boolean): string | undefined {
  if (typeof value !== 'string') return undefined;
  const fixed = upper ? value.toUpperCase() : value.toLowerCase();
  return fixed !== value && allowed.includes(fixed) ? fixed : undefined;
}

/**
 * Reads a type name that must be one of `allowed` in one casing. Reports a wrong casing or an
 * unknown name at `where` and answers the name in the right casing (so later checks compare
 * like with like and one slip is reported once), or undefined when it is not a known name.
 */
export function readName(value: unknown, allowed: readonly string[], upper: boolean, where: string, problems: string[]): string | undefined {
  if (typeof value === 'string' && allowed.includes(value)) return value;
  const fixed = casingSlip(value, allowed, upper);
  if (fixed) {
    problems.push(`${where}: ${upper ? 'definition casing is upper case' : 'sending casing is lower case'}: write ${JSON.stringify(fixed)}, not ${JSON.stringify(value)}`);
    return fixed;
  }
  problems.push(`${where}: must be ${allowed.length === 1 ? JSON.stringify(allowed[0]) : `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`}, got ${shown(value)}`);
  return undefined;
}

/**
 * The part both checks share: the component is an object of type `carousel` in the given
 * casing, with 2 to 10 cards. Answers the cards (also when their number is wrong, so each is
 * still checked) with the problems so far, or the problems alone when there are no cards to read.
 */
export function readCarousel(component: unknown, path: string, upper: boolean): { cards?: unknown[]; problems: string[] } {
  const type = upper ? 'CAROUSEL' : 'carousel';
  if (!isObject(component)) return { problems: [`${path}: must be an object such as { type: "${type}", cards: [...] }`] };
  const problems: string[] = [];
  readName(component.type, [type], upper, `${path}.type`, problems);
  const cards = component.cards;
  if (!Array.isArray(cards)) {
    problems.push(`${path}.cards: must be an array of ${MIN_CARDS} to ${MAX_CARDS} cards, got ${shown(cards)}`);
    return { problems };
  }
  if (cards.length < MIN_CARDS || cards.length > MAX_CARDS) problems.push(`${path}.cards: a carousel has ${MIN_CARDS} to ${MAX_CARDS} cards, got ${cards.length}`);
  return { cards, problems };
}

/**
 * The other part both checks share: each of a card's components is an object whose type is one
 * of `allowed` in the given casing. `visit` gets each readable component with its type and path;
 * the others are reported.
 */
export function readCardComponents(components: unknown[], path: string, allowed: readonly string[], upper: boolean, problems: string[], visit: (part: Json, type: string, at: string) => void): void {
  components.forEach((part: unknown, j: number) => {
    const at = `${path}.components[${j}]`;
    if (!isObject(part)) {
      problems.push(`${at}: must be an object with a type (${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)})`);
      return;
    }
    const type = readName(part.type, allowed, upper, `${at}.type`, problems);
    if (type) visit(part, type, at);
  });
}
