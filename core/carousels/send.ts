import { isObject, MAX_BUTTONS, nonEmptyString, readCardComponents, readCarousel, readName, shown, variablesOf, type Json } from './shape.ts';

/**
 * The `carousel` component of a template send (spec 4.3): `{ type: "carousel", cards: [ {
 * card_index, components: [ header with the image (or video) id, body parameters, button
 * parameters ] } ] }`. Sending casing is lower (`header`, `button`, `quick_reply`), a button's
 * `index` is an integer, and each quick-reply button carries its own `payload` string, "since the
 * resulting event has no card index" — so no two buttons of a carousel may share a payload.
 * `card_index` numbers the cards from 0, each once. Every problem is reported at once.
 */

const CARD_COMPONENTS = ['header', 'body', 'button'] as const;
const HEADER_TYPES = ['image', 'video'] as const;
const BUTTON_SUB_TYPES = ['quick_reply', 'url'] as const;

interface SendCard {
  path: string;
  cardIndex?: number;
  headerType?: string;
  headerPath?: string;
  /** Where the card's body parameters are and how many, when it sends a body. */
  body?: { path: string; count: number };
  /** The card's buttons by index: where, and their sub_type. */
  buttons: Map<number, { path: string; subType?: string }>;
}

/**
 * With `definition` (the template's stored `CAROUSEL` component, when known) the send is also
 * held against it: as many cards as defined, each card's header type, body values and buttons
 * as its definition asks (a dynamic URL needs its value; every quick-reply button its payload).
 */
export function checkCarouselSend(component: unknown, path: string, definition?: unknown): string[] {
  const { cards, problems } = readCarousel(component, path, false);
  if (!cards) return problems;
  const payloads = new Map<string, string>();
  const read = cards.map((card, i) => checkCard(card, `${path}.cards[${i}]`, payloads, problems)).filter((c): c is SendCard => c !== undefined);
  checkCardIndexes(read, cards.length, problems);
  const headerRef = read.find((c) => c.headerType);
  for (const card of read) {
    if (headerRef && card.headerType && card.headerType !== headerRef.headerType) {
      problems.push(`${card.headerPath}: all cards have the same header type: ${headerRef.path.slice(path.length + 1)} sends ${headerRef.headerType}, this card ${card.headerType}`);
    }
  }
  if (isObject(definition) && Array.isArray(definition.cards)) compareWithDefinition(read, cards.length, definition.cards, path, problems);
  return problems;
}

function checkCard(card: unknown, path: string, payloads: Map<string, string>, problems: string[]): SendCard | undefined {
  if (!isObject(card)) {
    problems.push(`${path}: must be an object such as { card_index: 0, components: [...] }`);
    return undefined;
  }
  const read: SendCard = { path, buttons: new Map() };
  if (Number.isInteger(card.card_index) && (card.card_index as number) >= 0) read.cardIndex = card.card_index as number;
  else problems.push(`${path}.card_index: must be an integer from 0 (the card's place in the template), got ${shown(card.card_index)}`);
  if (!Array.isArray(card.components)) {
    problems.push(`${path}.components: must be an array holding the card's header and button parameters, got ${shown(card.components)}`);
    return read;
  }
  let headers = 0;
  readCardComponents(card.components, path, CARD_COMPONENTS, false, problems, (part, type, at) => {
    if (type === 'header') {
      headers += 1;
      if (headers > 1) problems.push(`${at}.type: a card has one header; this is a second one`);
      else checkHeader(part, at, read, problems);
    } else if (type === 'body') {
      checkBodyParameters(part, at, problems);
      read.body = { path: `${at}.parameters`, count: Array.isArray(part.parameters) ? part.parameters.length : 0 };
    } else if (type === 'button') checkButton(part, at, read.buttons, payloads, problems);
  });
  if (headers === 0) problems.push(`${path}.components: each card needs its header parameter: { type: "header", parameters: [{ type: "image", image: { id } }] }`);
  return read;
}

function checkHeader(header: Json, at: string, read: SendCard, problems: string[]): void {
  const parameters = header.parameters;
  if (!Array.isArray(parameters) || parameters.length !== 1 || !isObject(parameters[0])) {
    problems.push(`${at}.parameters: a card header has one parameter such as { type: "image", image: { id } }, got ${shown(parameters)}`);
    return;
  }
  const parameter = parameters[0];
  const type = readName(parameter.type, HEADER_TYPES, false, `${at}.parameters[0].type`, problems);
  if (!type) return;
  Object.assign(read, { headerType: type, headerPath: `${at}.parameters[0].type` });
  const media = parameter[type];
  const sources = isObject(media) ? (['id', 'link'] as const).filter((key) => nonEmptyString(media[key])) : [];
  if (sources.length !== 1) {
    problems.push(`${at}.parameters[0].${type}: needs exactly one of id (from templates/send-media) or link, got ${shown(media)}`);
  }
}

function checkBodyParameters(body: Json, at: string, problems: string[]): void {
  if (!Array.isArray(body.parameters) || body.parameters.length === 0) {
    problems.push(`${at}.parameters: a card body lists its variables' values, got ${shown(body.parameters)}`);
    return;
  }
  body.parameters.forEach((parameter: unknown, k: number) => {
    if (!isObject(parameter) || typeof parameter.type !== 'string') problems.push(`${at}.parameters[${k}]: must be an object with a type, such as { type: "text", text }`);
    else if (parameter.type === 'text' && !nonEmptyString(parameter.text)) problems.push(`${at}.parameters[${k}].text: must be a non-empty string, got ${shown(parameter.text)}`);
  });
}

function checkButton(button: Json, at: string, buttons: SendCard['buttons'], payloads: Map<string, string>, problems: string[]): void {
  const subType = readName(button.sub_type, BUTTON_SUB_TYPES, false, `${at}.sub_type`, problems);
  if (Number.isInteger(button.index) && (button.index as number) >= 0 && (button.index as number) < MAX_BUTTONS) {
    const index = button.index as number;
    const earlier = buttons.get(index);
    if (earlier) problems.push(`${at}.index: ${index} is also the index of ${earlier.path}`);
    else buttons.set(index, { path: at, ...(subType && { subType }) });
  } else {
    problems.push(`${at}.index: must be an integer, 0 to ${MAX_BUTTONS - 1} (the button's place on the card), got ${shown(button.index)}`);
  }
  const parameters = button.parameters;
  const parameter = Array.isArray(parameters) && parameters.length === 1 && isObject(parameters[0]) ? parameters[0] : undefined;
  if (subType === 'quick_reply') {
    if (!parameter || parameter.type !== 'payload') {
      problems.push(`${at}.parameters: a quick-reply button has one parameter { type: "payload", payload: <string> }, got ${shown(parameters)}`);
    } else if (!nonEmptyString(parameter.payload)) {
      problems.push(`${at}.parameters[0].payload: each button needs its own payload string (a tap reports the payload, not the card), got ${shown(parameter.payload)}`);
    } else {
      const earlier = payloads.get(parameter.payload);
      if (earlier) {
        problems.push(`${at}.parameters[0].payload: ${JSON.stringify(parameter.payload)} is also the payload of ${earlier}; a tap carries no card index, so each payload must tell its card apart`);
      } else payloads.set(parameter.payload, at);
    }
  } else if (subType === 'url') {
    if (!parameter || parameter.type !== 'text' || !nonEmptyString(parameter.text)) {
      problems.push(`${at}.parameters: a URL button has one parameter { type: "text", text: <the URL's variable part> }, got ${shown(parameters)}`);
    }
  }
}

/** `card_index` numbers the cards 0 to n-1, each once (Graph: "zero-indexed, left to right"). */
function checkCardIndexes(cards: SendCard[], count: number, problems: string[]): void {
  const first = new Map<number, string>();
  for (const card of cards) {
    if (card.cardIndex === undefined) continue;
    const earlier = first.get(card.cardIndex);
    if (earlier) problems.push(`${card.path}.card_index: ${card.cardIndex} is also the card_index of ${earlier}; each card has its own`);
    else first.set(card.cardIndex, card.path);
    if (card.cardIndex >= count) problems.push(`${card.path}.card_index: ${card.cardIndex} is past the last card: with ${count} cards, card_index runs from 0 to ${count - 1}`);
  }
}

/**
 * The send against the stored definition. Graph: "An approved template can only be used to send
 * the same number of cards as defined during its creation."
 */
function compareWithDefinition(cards: SendCard[], count: number, defined: unknown[], path: string, problems: string[]): void {
  if (count !== defined.length) problems.push(`${path}.cards: the template has ${defined.length} cards; send all ${defined.length}, got ${count}`);
  for (const card of cards) {
    if (card.cardIndex === undefined || card.cardIndex >= defined.length) continue;
    const parts = isObject(defined[card.cardIndex]) && Array.isArray((defined[card.cardIndex] as Json).components) ? ((defined[card.cardIndex] as Json).components as unknown[]).filter(isObject) : [];
    const named = `card_index ${card.cardIndex}`;
    const format = parts.find((p) => p.type === 'HEADER')?.format;
    if (card.headerType && typeof format === 'string' && card.headerType !== format.toLowerCase()) {
      problems.push(`${card.headerPath}: the template's ${named} has a ${format} header; give a ${format.toLowerCase()} parameter`);
    }
    const bodyText = parts.find((p) => p.type === 'BODY')?.text;
    const variables = typeof bodyText === 'string' ? new Set(variablesOf(bodyText)).size : 0;
    if (card.body && card.body.count !== variables) {
      problems.push(`${card.body.path}: the body of the template's ${named} has ${variables} variable(s), ${card.body.count} parameter(s) given`);
    } else if (!card.body && variables > 0) {
      problems.push(`${card.path}.components: the body of the template's ${named} has ${variables} variable(s); send a body component with ${variables} text parameter(s)`);
    }
    const definedButtons = parts.find((p) => p.type === 'BUTTONS')?.buttons;
    const buttons: Json[] = Array.isArray(definedButtons) ? definedButtons.filter(isObject) : [];
    for (const [index, sent] of card.buttons) {
      const button = buttons[index];
      if (!button) problems.push(`${sent.path}.index: the template's ${named} has ${buttons.length} button(s); ${index} is not one of them`);
      else if (sent.subType && sent.subType !== String(button.type).toLowerCase()) {
        problems.push(`${sent.path}.sub_type: button ${index} of the template's ${named} is ${String(button.type).toLowerCase()}`);
      }
    }
    buttons.forEach((button, index) => {
      if (card.buttons.has(index)) return;
      if (button.type === 'QUICK_REPLY') {
        problems.push(`${card.path}.components: quick-reply button ${index} needs a button component (index ${index}) with its own payload; a tap reports the payload, not the card`);
      } else if (button.type === 'URL' && typeof button.url === 'string' && variablesOf(button.url).length > 0) {
        problems.push(`${card.path}.components: URL button ${index} needs a button component (index ${index}) with the value of its {{1}}`);
      }
    });
  }
}
