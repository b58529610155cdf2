import { isObject, nonEmptyString, type Json } from './shape.ts';
import { fillVariables, parametersOf } from '../templates/template-text.ts';

/**
 * A carousel as plain text, for a network without templates (spec 4.3: "on an unofficial
 * connection a carousel degrades to plain text"). One numbered paragraph per card, in
 * `card_index` order: the card's body with its variables filled in, then its buttons one per
 * line, indented, a URL or phone button followed by where it leads:
 *
 * ```
 * 1. Rare lemons for unique lemon tea. Use code LEMON15.
 *    - Shop now: https://shop.example/lemons
 *    - More like this
 *
 * 2. …
 * ```
 *
 * With the template's definition (`definition`, its `CAROUSEL` component) the bodies and button
 * labels come from it; without it only what the send carries is known: a card's body parameters
 * (joined by spaces), or `Card <n>` when it has none, and no buttons (a quick-reply payload is an
 * id, not a label). `component` may also be a definition alone (then there is nothing to fill in).
 * Answers null when there is no card at all.
 */
export function carouselAsText(component: unknown, definition?: unknown): string | null {
  let send: Json | undefined = isObject(component) ? component : undefined;
  let defined: Json | undefined = isObject(definition) ? definition : undefined;
  if (!defined && send && typeof send.type === 'string' && send.type === send.type.toUpperCase()) [defined, send] = [send, undefined];
  const definedCards = Array.isArray(defined?.cards) ? defined.cards : [];
  const sentCards = byCardIndex(Array.isArray(send?.cards) ? send.cards : []);
  const count = Math.max(definedCards.length, sentCards.length);
  if (count === 0) return null;
  const paragraphs: string[] = [];
  for (let n = 0; n < count; n++) paragraphs.push(cardText(n, componentsOf(definedCards[n]), componentsOf(sentCards[n])));
  return paragraphs.join('\n\n');
}

function cardText(n: number, defined: Json[], sent: Json[]): string {
  const definedBody = defined.find((c) => c.type === 'BODY');
  const bodyValues = parametersOf(sent.find((c) => c.type === 'body'));
  const body = nonEmptyString(definedBody?.text)
    ? fillVariables(definedBody.text, bodyValues)
    : bodyValues.filter(Boolean).join(' ') || `Card ${n + 1}`;
  const lines = [`${n + 1}. ${body.replace(/\n/g, '\n   ')}`];
  const buttons = defined.find((c) => c.type === 'BUTTONS')?.buttons;
  if (Array.isArray(buttons)) {
    buttons.forEach((button: unknown, index: number) => {
      if (!isObject(button) || !nonEmptyString(button.text)) return;
      const sentButton = sent.find((c) => c.type === 'button' && c.index === index);
      lines.push(`   - ${button.text}${buttonTarget(button, parametersOf(sentButton))}`);
    });
  }
  return lines.join('\n');
}

function buttonTarget(button: Json, values: string[]): string {
  if (button.type === 'URL' && nonEmptyString(button.url)) return `: ${fillVariables(button.url, values)}`;
  if (button.type === 'PHONE_NUMBER' && nonEmptyString(button.phone_number)) return `: ${button.phone_number}`;
  return '';
}

function componentsOf(card: unknown): Json[] {
  return isObject(card) && Array.isArray(card.components) ? card.components.filter(isObject) : [];
}

/** Cards by `card_index` when every card has a distinct usable one, otherwise in the order given. */
function byCardIndex(cards: unknown[]): unknown[] {
  const indexes = cards.map((c) => (isObject(c) && Number.isInteger(c.card_index) ? (c.card_index as number) : -1));
  if (indexes.some((i) => i < 0 || i >= cards.length) || new Set(indexes).size !== cards.length) return cards;
  const ordered: unknown[] = [];
  cards.forEach((card, k) => (ordered[indexes[k]!] = card));
  return ordered;
}
