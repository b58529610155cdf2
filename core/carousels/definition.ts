import { isObject, MAX_BUTTONS, nonEmptyString, readCardComponents, readCarousel, readName, shown, variablesOf, type Json } from './shape.ts';

/**
 * The `CAROUSEL` component of a template definition (spec 4.3, "Carousel template"): 2 to 10
 * cards; each card has a media header (`format` IMAGE or VIDEO with `example.header_handle`), a
 * body and up to two buttons (QUICK_REPLY, URL or PHONE_NUMBER, as the Graph API takes them); all
 * cards have the same header format and the same number and types of buttons. Definition casing
 * is upper (`HEADER`, `BUTTONS`, `QUICK_REPLY`). Every offending field is reported at once, as
 * `<path>: <message>` with `path` like `components[1].cards[3].components[0].example.header_handle`.
 */

const CARD_COMPONENTS = ['HEADER', 'BODY', 'BUTTONS'] as const;
const HEADER_FORMATS = ['IMAGE', 'VIDEO'] as const;
const BUTTON_TYPES = ['QUICK_REPLY', 'URL', 'PHONE_NUMBER'] as const;
/** Graph API limits of a carousel card: body text 160 characters, button label 25. */
const MAX_CARD_BODY = 160;
const MAX_BUTTON_TEXT = 25;

/** What the cross-card rules compare, with where to report a difference. */
interface CardShape {
  index: number;
  format?: string;
  formatPath?: string;
  /** Button types in order, in upper case; undefined when one of them is unknown. */
  buttons?: string[];
  buttonsPath: string;
}

export function checkCarouselDefinition(component: unknown, path: string): string[] {
  const { cards, problems } = readCarousel(component, path, true);
  if (!cards) return problems;
  const shapes = cards.map((card, i) => checkCard(card, i, `${path}.cards[${i}]`, problems)).filter((s): s is CardShape => s !== undefined);
  compareCards(shapes, problems);
  return problems;
}

function checkCard(card: unknown, index: number, path: string, problems: string[]): CardShape | undefined {
  if (!isObject(card)) {
    problems.push(`${path}: must be an object such as { components: [HEADER, BODY, BUTTONS] }`);
    return undefined;
  }
  if (!Array.isArray(card.components)) {
    problems.push(`${path}.components: must be an array holding the card's HEADER, BODY and BUTTONS, got ${shown(card.components)}`);
    return undefined;
  }
  const shape: CardShape = { index, buttons: [], buttonsPath: `${path}.components` };
  const seen = new Set<string>();
  readCardComponents(card.components, path, CARD_COMPONENTS, true, problems, (part, type, at) => {
    if (seen.has(type)) {
      problems.push(`${at}.type: a card has one ${type}; this is a second one`);
      return;
    }
    seen.add(type);
    if (type === 'HEADER') checkHeader(part, at, shape, problems);
    else if (type === 'BODY') checkBody(part, at, problems);
    else checkButtons(part, at, shape, problems);
  });
  if (!seen.has('HEADER')) problems.push(`${path}.components: a card needs a media HEADER (format IMAGE or VIDEO with example.header_handle)`);
  if (!seen.has('BODY')) problems.push(`${path}.components: a card needs a BODY`);
  return shape;
}

function checkHeader(header: Json, at: string, shape: CardShape, problems: string[]): void {
  if (header.format === undefined) problems.push(`${at}.format: a card header is media: "IMAGE" or "VIDEO"`);
  else {
    const format = readName(header.format, HEADER_FORMATS, true, `${at}.format`, problems);
    if (format) Object.assign(shape, { format, formatPath: `${at}.format` });
  }
  const handle = isObject(header.example) ? header.example.header_handle : undefined;
  if (!Array.isArray(handle) || handle.length === 0 || !handle.every(nonEmptyString)) {
    problems.push(`${at}.example.header_handle: needs the handle of an uploaded sample (POST /v3/connections/{id}/templates/header-media) in an array, got ${shown(handle)}`);
  }
}

function checkBody(body: Json, at: string, problems: string[]): void {
  if (!nonEmptyString(body.text)) {
    problems.push(`${at}.text: a card body needs a non-empty text, got ${shown(body.text)}`);
    return;
  }
  if (body.text.length > MAX_CARD_BODY) problems.push(`${at}.text: a card body has at most ${MAX_CARD_BODY} characters, got ${body.text.length}`);
  const variables = variablesOf(body.text);
  if (variables.length === 0) return;
  const count = new Set(variables).size;
  if (![...new Set(variables)].sort((a, b) => a - b).every((n, i) => n === i + 1)) {
    problems.push(`${at}.text: variables are numbered {{1}} to {{${count}}} without gaps`);
  }
  const examples = isObject(body.example) && Array.isArray(body.example.body_text) ? body.example.body_text[0] : undefined;
  if (!Array.isArray(examples) || examples.length !== count || !examples.every(nonEmptyString)) {
    problems.push(`${at}.example.body_text: the text has ${count} variable(s); give one sample for each, as [[${Array.from({ length: count }, (_, i) => `"sample ${i + 1}"`).join(', ')}]]`);
  }
}

function checkButtons(part: Json, at: string, shape: CardShape, problems: string[]): void {
  shape.buttonsPath = `${at}.buttons`;
  const buttons = part.buttons;
  if (!Array.isArray(buttons) || buttons.length === 0 || buttons.length > MAX_BUTTONS) {
    problems.push(`${at}.buttons: a card has 1 to ${MAX_BUTTONS} buttons (leave BUTTONS out for none), got ${Array.isArray(buttons) ? buttons.length : shown(buttons)}`);
    if (!Array.isArray(buttons)) {
      shape.buttons = undefined;
      return;
    }
  }
  const types: string[] = [];
  buttons.forEach((button: unknown, k: number) => {
    const bt = `${at}.buttons[${k}]`;
    if (!isObject(button)) {
      problems.push(`${bt}: must be an object such as { type: "QUICK_REPLY", text: "Buy" }`);
      return;
    }
    const type = readName(button.type, BUTTON_TYPES, true, `${bt}.type`, problems);
    if (type) types.push(type);
    if (!nonEmptyString(button.text)) problems.push(`${bt}.text: a button needs a label, got ${shown(button.text)}`);
    else if (button.text.length > MAX_BUTTON_TEXT) problems.push(`${bt}.text: a button label has at most ${MAX_BUTTON_TEXT} characters, got ${button.text.length}`);
    if (type === 'URL' && !(nonEmptyString(button.url) && /^https?:\/\//i.test(button.url))) {
      problems.push(`${bt}.url: a URL button needs an http(s) url, got ${shown(button.url)}`);
    }
    if (type === 'PHONE_NUMBER' && !nonEmptyString(button.phone_number)) {
      problems.push(`${bt}.phone_number: a PHONE_NUMBER button needs a phone_number, got ${shown(button.phone_number)}`);
    }
  });
  shape.buttons = types.length === buttons.length ? types : undefined;
}

/** Spec 4.3: "all cards have the same header format and same number and type of buttons". */
function compareCards(shapes: CardShape[], problems: string[]): void {
  const formatRef = shapes.find((s) => s.format);
  const buttonsRef = shapes.find((s) => s.buttons);
  for (const shape of shapes) {
    if (formatRef && shape.format && shape.format !== formatRef.format) {
      problems.push(`${shape.formatPath}: all cards have the same header format: cards[${formatRef.index}] has ${formatRef.format}, this card ${shape.format}`);
    }
    if (buttonsRef && shape.buttons && shape.buttons.join() !== buttonsRef.buttons!.join()) {
      problems.push(
        `${shape.buttonsPath}: all cards have the same number and types of buttons: cards[${buttonsRef.index}] has ${listed(buttonsRef.buttons!)}, this card ${listed(shape.buttons)}`,
      );
    }
  }
}

function listed(types: string[]): string {
  return types.length === 0 ? 'none' : `${types.length} (${types.join(', ')})`;
}
