import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { checkCarouselDefinition } from '../../core/carousels/definition.ts';
import { checkCarouselSend } from '../../core/carousels/send.ts';
import { carouselAsText } from '../../core/carousels/text.ts';
import { carouselsPlugin } from '../../plugins/carousels/index.ts';

/**
 * Carousel validation (issue 9: "Property tests: carousel validation (random card sets: valid
 * ones pass, each kind of defect is reported, all defects reported together)").
 *
 * Spec 4.3: "Carousel template: component type `CAROUSEL` with 2 to 10 cards; each card has a
 * media header (`example.header_handle`), a body and up to two buttons; all cards have the same
 * header format and same number and type of buttons. Sending a carousel: one component `{ type:
 * carousel, cards: [ { card_index: <int>, components: [ header with image id, button parameters
 * ] } ] }`. Definition casing is upper (`HEADER`, `BUTTONS`, `QUICK_REPLY`); sending casing is
 * lower (`header`, `button`, `quick_reply`), and the button `index` is an integer. Each button
 * carries its own `payload` string, since the resulting event has no card index. Validation
 * reports all offending fields at once."
 *
 * Each defect is planted at a known path of a random valid carousel; the check must name that
 * path (and, planted on one card, name nothing outside that card). Several defects on distinct
 * cards must all be named by one check.
 */

const P = 'components[1]';
const SP = 'components[0]';
type Json = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// Random valid carousels: a definition and a send matching it.

const BUTTON_TYPES = ['QUICK_REPLY', 'URL', 'PHONE_NUMBER'] as const;
type ButtonType = (typeof BUTTON_TYPES)[number];

interface Plan {
  format: 'IMAGE' | 'VIDEO';
  buttons: ButtonType[];
  cards: Array<{ body: string; variable: string | null; handle: string; labels: string[]; mediaId: string }>;
  /** The order cards are listed in the send (card_index says which is which). */
  sendOrder: number[];
}

const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ]{0,11}[A-Za-z0-9]$/);
const planArb: fc.Arbitrary<Plan> = fc
  .record({
    count: fc.integer({ min: 2, max: 10 }),
    format: fc.constantFrom('IMAGE' as const, 'VIDEO' as const),
    buttons: fc.array(fc.constantFrom(...BUTTON_TYPES), { minLength: 0, maxLength: 2 }),
  })
  .chain(({ count, format, buttons }) =>
    fc.record({
      format: fc.constant(format),
      buttons: fc.constant(buttons),
      cards: fc.array(
        fc.record({
          body: word,
          variable: fc.option(word, { nil: null }),
          handle: fc.stringMatching(/^4::[A-Za-z0-9]{4,20}$/),
          labels: fc.tuple(word, word).map((pair) => pair.slice(0, buttons.length)),
          mediaId: fc.stringMatching(/^[0-9]{6,16}$/),
        }),
        { minLength: count, maxLength: count },
      ),
      sendOrder: fc.shuffledSubarray([...Array(count).keys()], { minLength: count, maxLength: count }),
    }),
  );

function definitionOf(plan: Plan): Json {
  return {
    type: 'CAROUSEL',
    cards: plan.cards.map((card) => ({
      components: [
        { type: 'HEADER', format: plan.format, example: { header_handle: [card.handle] } },
        card.variable === null ? { type: 'BODY', text: card.body } : { type: 'BODY', text: `${card.body} {{1}}`, example: { body_text: [['sample']] } },
        ...(plan.buttons.length === 0
          ? []
          : [
              {
                type: 'BUTTONS',
                buttons: plan.buttons.map((type, k) =>
                  type === 'URL'
                    ? { type, text: card.labels[k], url: 'https://shop.example/{{1}}' }
                    : type === 'PHONE_NUMBER'
                      ? { type, text: card.labels[k], phone_number: '+15550100000' }
                      : { type, text: card.labels[k] },
                ),
              },
            ]),
      ],
    })),
  };
}

function sendOf(plan: Plan): Json {
  const media = plan.format.toLowerCase();
  return {
    type: 'carousel',
    cards: plan.sendOrder.map((i) => {
      const card = plan.cards[i]!;
      const components: Json[] = [{ type: 'header', parameters: [{ type: media, [media]: { id: card.mediaId } }] }];
      if (card.variable !== null) components.push({ type: 'body', parameters: [{ type: 'text', text: card.variable }] });
      plan.buttons.forEach((type, k) => {
        if (type === 'QUICK_REPLY') components.push({ type: 'button', sub_type: 'quick_reply', index: k, parameters: [{ type: 'payload', payload: `card-${i}-button-${k}` }] });
        if (type === 'URL') components.push({ type: 'button', sub_type: 'url', index: k, parameters: [{ type: 'text', text: `item-${i}` }] });
      });
      return { card_index: i, components };
    }),
  };
}

const component = (def: Json, card: number, type: string): { at: string; part: Json } => {
  const parts: Json[] = def.cards[card].components;
  const j = parts.findIndex((p) => String(p.type).toUpperCase() === type);
  return { at: `${P}.cards[${card}].components[${j}]`, part: parts[j]! };
};

// ---------------------------------------------------------------------------------------------
// Definition defects: each plants one defect on card `k` (or on the whole carousel) and says
// where the check must report it and a word the report must hold.

interface Defect {
  name: string;
  /** Whether this defect can be planted on this plan at card k (k ≥ 1: card 0 is the reference). */
  fits(plan: Plan, k: number): boolean;
  plant(def: Json, plan: Plan, k: number): { path: string; says: string };
}

const otherType = (type: ButtonType): ButtonType => BUTTON_TYPES[(BUTTON_TYPES.indexOf(type) + 1) % BUTTON_TYPES.length]!;

const CARD_DEFECTS: Defect[] = [
  {
    name: 'header format differs from the other cards',
    fits: () => true,
    plant(def, plan, k) {
      const { at, part } = component(def, k, 'HEADER');
      part.format = plan.format === 'IMAGE' ? 'VIDEO' : 'IMAGE';
      return { path: `${at}.format`, says: 'same header format' };
    },
  },
  {
    name: 'header without example.header_handle',
    fits: () => true,
    plant(def, _plan, k) {
      const { at, part } = component(def, k, 'HEADER');
      delete part.example;
      return { path: `${at}.example.header_handle`, says: 'handle' };
    },
  },
  {
    name: 'header with an empty header_handle',
    fits: () => true,
    plant(def, _plan, k) {
      const { at, part } = component(def, k, 'HEADER');
      part.example.header_handle = [];
      return { path: `${at}.example.header_handle`, says: 'handle' };
    },
  },
  {
    name: 'a text header instead of media',
    fits: () => true,
    plant(def, _plan, k) {
      const { at, part } = component(def, k, 'HEADER');
      part.format = 'TEXT';
      return { path: `${at}.format`, says: '"IMAGE", "VIDEO"' };
    },
  },
  {
    name: 'card without a body',
    fits: () => true,
    plant(def, _plan, k) {
      def.cards[k].components = def.cards[k].components.filter((p: Json) => p.type !== 'BODY');
      return { path: `${P}.cards[${k}].components`, says: 'needs a BODY' };
    },
  },
  {
    name: 'one button fewer than the other cards',
    fits: (plan) => plan.buttons.length === 2,
    plant(def, _plan, k) {
      const { at, part } = component(def, k, 'BUTTONS');
      part.buttons.pop();
      return { path: `${at}.buttons`, says: 'same number and types of buttons' };
    },
  },
  {
    name: 'one button more than the other cards',
    fits: (plan) => plan.buttons.length === 1,
    plant(def, _plan, k) {
      const { at, part } = component(def, k, 'BUTTONS');
      part.buttons.push({ type: 'QUICK_REPLY', text: 'Extra' });
      return { path: `${at}.buttons`, says: 'same number and types of buttons' };
    },
  },
  {
    name: 'buttons where the other cards have none',
    fits: (plan) => plan.buttons.length === 0,
    plant(def, _plan, k) {
      def.cards[k].components.push({ type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Extra' }] });
      return { path: `${P}.cards[${k}].components[${def.cards[k].components.length - 1}].buttons`, says: 'same number and types of buttons' };
    },
  },
  {
    name: 'three buttons on a card',
    fits: (plan) => plan.buttons.length === 2,
    plant(def, _plan, k) {
      const { at, part } = component(def, k, 'BUTTONS');
      part.buttons.push({ type: 'QUICK_REPLY', text: 'Third' });
      return { path: `${at}.buttons`, says: '1 to 2 buttons' };
    },
  },
  {
    name: 'a button of another type than on the other cards',
    fits: (plan) => plan.buttons.length > 0,
    plant(def, plan, k) {
      const { at, part } = component(def, k, 'BUTTONS');
      const type = otherType(plan.buttons[0]!);
      part.buttons[0] = type === 'URL' ? { type, text: 'Go', url: 'https://x.example' } : type === 'PHONE_NUMBER' ? { type, text: 'Call', phone_number: '+1555' } : { type, text: 'Tap' };
      return { path: `${at}.buttons`, says: 'same number and types of buttons' };
    },
  },
  {
    name: 'lower-case component type in a definition',
    fits: () => true,
    plant(def, _plan, k) {
      const { at, part } = component(def, k, 'HEADER');
      part.type = 'header';
      return { path: `${at}.type`, says: 'upper case' };
    },
  },
  {
    name: 'lower-case header format in a definition',
    fits: () => true,
    plant(def, plan, k) {
      const { at, part } = component(def, k, 'HEADER');
      part.format = plan.format.toLowerCase();
      return { path: `${at}.format`, says: 'upper case' };
    },
  },
  {
    name: 'lower-case button type in a definition',
    fits: (plan) => plan.buttons.length > 0,
    plant(def, plan, k) {
      const { at, part } = component(def, k, 'BUTTONS');
      part.buttons[0].type = plan.buttons[0]!.toLowerCase();
      return { path: `${at}.buttons[0].type`, says: 'upper case' };
    },
  },
  {
    name: 'lower-case BUTTONS in a definition',
    fits: (plan) => plan.buttons.length > 0,
    plant(def, _plan, k) {
      const { at, part } = component(def, k, 'BUTTONS');
      part.type = 'buttons';
      return { path: `${at}.type`, says: 'upper case' };
    },
  },
];

/** Defects of the carousel as a whole (its card count, its own type). */
const WHOLE_DEFECTS: Array<{ name: string; plant(def: Json, extra: number): { path: string; says: string } }> = [
  {
    name: 'fewer than 2 cards',
    plant(def, extra) {
      def.cards = def.cards.slice(0, extra % 2);
      return { path: `${P}.cards`, says: '2 to 10 cards' };
    },
  },
  {
    name: 'more than 10 cards',
    plant(def, extra) {
      while (def.cards.length <= 10 + (extra % 3)) def.cards.push(structuredClone(def.cards[0]));
      return { path: `${P}.cards`, says: '2 to 10 cards' };
    },
  },
  {
    name: 'lower-case carousel type in a definition',
    plant(def) {
      def.type = 'carousel';
      return { path: `${P}.type`, says: 'upper case' };
    },
  },
];

const reports = (problems: string[], path: string, says: string) => problems.some((p) => p.startsWith(`${path}: `) && p.includes(says));

describe('carousel definition (spec 4.3 "Carousel template")', () => {
  test('random valid carousels pass, through the plugin’s rule too', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const def = definitionOf(plan);
        expect(checkCarouselDefinition(def, P)).toEqual([]);
        expect(carouselsPlugin.templateComponents!.CAROUSEL!.checkDefinition(def, P)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  for (const defect of CARD_DEFECTS) {
    test(`reported where it is: ${defect.name}`, () => {
      fc.assert(
        fc.property(
          planArb.filter((plan) => defect.fits(plan, 1)),
          fc.nat(),
          (plan, pick) => {
            const def = definitionOf(plan);
            const k = 1 + (pick % (plan.cards.length - 1));
            const { path, says } = defect.plant(def, plan, k);
            const problems = checkCarouselDefinition(def, P);
            expect(reports(problems, path, says)).toBe(true);
            // Planted on card k: nothing is reported of another card (card 0 is the reference).
            for (const problem of problems) expect(problem.startsWith(`${P}.cards[${k}]`)).toBe(true);
          },
        ),
        { numRuns: 120 },
      );
    });
  }

  for (const defect of WHOLE_DEFECTS) {
    test(`reported where it is: ${defect.name}`, () => {
      fc.assert(
        fc.property(planArb, fc.nat(), (plan, extra) => {
          const def = definitionOf(plan);
          const { path, says } = defect.plant(def, extra);
          const problems = checkCarouselDefinition(def, P);
          expect(reports(problems, path, says)).toBe(true);
          expect(problems).toHaveLength(1);
        }),
        { numRuns: 120 },
      );
    });
  }

  test('several defects on several cards are all reported by one check', () => {
    // Spec 4.3: "Validation reports all offending fields at once."
    fc.assert(
      fc.property(
        planArb.filter((plan) => plan.cards.length >= 3),
        fc.array(fc.nat({ max: CARD_DEFECTS.length - 1 }), { minLength: 2, maxLength: 9 }),
        fc.option(fc.nat({ max: WHOLE_DEFECTS.length - 1 }), { nil: undefined }),
        (plan, picks, whole) => {
          const def = definitionOf(plan);
          const planted: Array<{ path: string; says: string }> = [];
          // One defect per card, cards 1, 2, …; card 0 stays the clean reference.
          picks.slice(0, plan.cards.length - 1).forEach((pick, n) => {
            const defect = CARD_DEFECTS.slice(pick).concat(CARD_DEFECTS.slice(0, pick)).find((d) => d.fits(plan, n + 1))!;
            planted.push(defect.plant(def, plan, n + 1));
          });
          // "More than 10 cards" appends clean copies of card 0; the others need no card.
          if (whole !== undefined && WHOLE_DEFECTS[whole]!.name !== 'fewer than 2 cards') planted.push(WHOLE_DEFECTS[whole]!.plant(def, 0));
          const problems = checkCarouselDefinition(def, P);
          for (const { path, says } of planted) expect(reports(problems, path, says)).toBe(true);
          expect(problems.length).toBeGreaterThanOrEqual(planted.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  test('what is not a carousel at all is one clear problem', () => {
    for (const value of [null, 'CAROUSEL', 42, []]) expect(checkCarouselDefinition(value, P)).toEqual([`${P}: must be an object such as { type: "CAROUSEL", cards: [...] }`]);
    expect(checkCarouselDefinition({ type: 'CAROUSEL' }, P)).toEqual([`${P}.cards: must be an array of 2 to 10 cards, got nothing`]);
  });
});

// ---------------------------------------------------------------------------------------------
// Send defects.

interface SendDefect {
  name: string;
  fits(plan: Plan): boolean;
  /** Plants on the card listed at position `at` of the send; answers where it must be reported. */
  plant(send: Json, plan: Plan, at: number): { path: string; says: string };
}

const buttonOf = (send: Json, at: number, subType: string): { path: string; part: Json } => {
  const parts: Json[] = send.cards[at].components;
  const j = parts.findIndex((p) => p.type === 'button' && p.sub_type === subType);
  return { path: `${SP}.cards[${at}].components[${j}]`, part: parts[j]! };
};

const SEND_DEFECTS: SendDefect[] = [
  {
    name: 'upper-case HEADER in a send',
    fits: () => true,
    plant(send, _plan, at) {
      send.cards[at].components[0].type = 'HEADER';
      return { path: `${SP}.cards[${at}].components[0].type`, says: 'lower case' };
    },
  },
  {
    name: 'upper-case media type in a send',
    fits: () => true,
    plant(send, plan, at) {
      const parameter = send.cards[at].components[0].parameters[0];
      parameter.type = plan.format;
      return { path: `${SP}.cards[${at}].components[0].parameters[0].type`, says: 'lower case' };
    },
  },
  {
    name: 'upper-case QUICK_REPLY in a send',
    fits: (plan) => plan.buttons.includes('QUICK_REPLY'),
    plant(send, _plan, at) {
      const { path, part } = buttonOf(send, at, 'quick_reply');
      part.sub_type = 'QUICK_REPLY';
      return { path: `${path}.sub_type`, says: 'lower case' };
    },
  },
  {
    name: 'a button index that is not an integer',
    fits: (plan) => plan.buttons.some((b) => b !== 'PHONE_NUMBER'),
    plant(send, plan, at) {
      const { path, part } = buttonOf(send, at, plan.buttons.includes('QUICK_REPLY') ? 'quick_reply' : 'url');
      part.index = [String(part.index), part.index + 0.5, null][at % 3];
      return { path: `${path}.index`, says: 'must be an integer' };
    },
  },
  {
    name: 'a quick-reply button without its payload',
    fits: (plan) => plan.buttons.includes('QUICK_REPLY'),
    plant(send, _plan, at) {
      const { path, part } = buttonOf(send, at, 'quick_reply');
      if (at % 2 === 0) delete part.parameters[0].payload;
      else part.parameters[0].payload = '';
      return { path: `${path}.parameters[0].payload`, says: 'payload' };
    },
  },
  {
    name: 'a payload another card uses too',
    fits: (plan) => plan.buttons.includes('QUICK_REPLY'),
    plant(send, _plan, at) {
      const { path, part } = buttonOf(send, at, 'quick_reply');
      part.parameters[0].payload = buttonOf(send, 0, 'quick_reply').part.parameters[0].payload;
      return { path: `${path}.parameters[0].payload`, says: 'no card index' };
    },
  },
  {
    name: 'a card_index that is not an integer',
    fits: () => true,
    plant(send, _plan, at) {
      send.cards[at].card_index = [String(send.cards[at].card_index), 0.5, -1][at % 3];
      return { path: `${SP}.cards[${at}].card_index`, says: 'must be an integer' };
    },
  },
  {
    name: 'a card without its header parameter',
    fits: () => true,
    plant(send, _plan, at) {
      send.cards[at].components.shift();
      return { path: `${SP}.cards[${at}].components`, says: 'header' };
    },
  },
  {
    name: 'a header without a media id or link',
    fits: () => true,
    plant(send, plan, at) {
      const media = plan.format.toLowerCase();
      send.cards[at].components[0].parameters[0][media] = {};
      return { path: `${SP}.cards[${at}].components[0].parameters[0].${media}`, says: 'id' };
    },
  },
];

describe('carousel send (spec 4.3 "Sending a carousel")', () => {
  test('random valid sends pass, whatever order the cards are listed in, alone and against their definition', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        expect(checkCarouselSend(sendOf(plan), SP)).toEqual([]);
        expect(checkCarouselSend(sendOf(plan), SP, definitionOf(plan))).toEqual([]);
        const rule = carouselsPlugin.templateComponents!.CAROUSEL!.checkSend as (c: unknown, p: string, d?: unknown) => string[];
        expect(rule(sendOf(plan), SP, definitionOf(plan))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  for (const defect of SEND_DEFECTS) {
    test(`reported where it is: ${defect.name}`, () => {
      fc.assert(
        fc.property(planArb.filter(defect.fits), fc.nat(), (plan, pick) => {
          const send = sendOf(plan);
          const at = 1 + (pick % (plan.cards.length - 1));
          const { path, says } = defect.plant(send, plan, at);
          const problems = checkCarouselSend(send, SP);
          expect(reports(problems, path, says)).toBe(true);
          for (const problem of problems) expect(problem.startsWith(`${SP}.cards[${at}]`)).toBe(true);
        }),
        { numRuns: 120 },
      );
    });
  }

  test('card_index numbers the cards from 0, each once: a repeated or out-of-range index is reported', () => {
    fc.assert(
      fc.property(planArb, fc.nat(), fc.boolean(), (plan, pick, repeat) => {
        const send = sendOf(plan);
        const at = 1 + (pick % (plan.cards.length - 1));
        send.cards[at].card_index = repeat ? send.cards[0].card_index : plan.cards.length + (pick % 5);
        const problems = checkCarouselSend(send, SP);
        expect(reports(problems, `${SP}.cards[${at}].card_index`, repeat ? 'also the card_index' : 'past the last card')).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  test('the wrong number of cards and an upper-case CAROUSEL are reported', () => {
    fc.assert(
      fc.property(planArb, fc.boolean(), (plan, few) => {
        const send = sendOf(plan);
        send.type = 'CAROUSEL';
        if (few) send.cards = send.cards.filter((c: Json) => c.card_index === 0);
        else while (send.cards.length <= 10) send.cards.push({ ...structuredClone(send.cards[0]), card_index: send.cards.length });
        const problems = checkCarouselSend(send, SP);
        expect(reports(problems, `${SP}.type`, 'lower case')).toBe(true);
        expect(reports(problems, `${SP}.cards`, '2 to 10 cards')).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  test('several send defects on several cards are all reported by one check', () => {
    fc.assert(
      fc.property(
        planArb.filter((plan) => plan.cards.length >= 3),
        fc.array(fc.nat({ max: SEND_DEFECTS.length - 1 }), { minLength: 2, maxLength: 9 }),
        (plan, picks) => {
          const send = sendOf(plan);
          const planted: Array<{ path: string; says: string }> = [];
          picks.slice(0, plan.cards.length - 1).forEach((pick, n) => {
            const defect = SEND_DEFECTS.slice(pick).concat(SEND_DEFECTS.slice(0, pick)).find((d) => d.fits(plan))!;
            planted.push(defect.plant(send, plan, n + 1));
          });
          const problems = checkCarouselSend(send, SP);
          for (const { path, says } of planted) expect(reports(problems, path, says)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** Sends that are well formed but do not fit the template's definition. */
const MISFIT_DEFECTS: SendDefect[] = [
  {
    name: 'a card header of another type than the definition',
    fits: () => true,
    plant(send, plan, at) {
      const other = plan.format === 'IMAGE' ? 'video' : 'image';
      // Every card changes, so the cards still agree with each other.
      for (const card of send.cards) card.components[0].parameters[0] = { type: other, [other]: { id: '123' } };
      return { path: `${SP}.cards[${at}].components[0].parameters[0].type`, says: 'header' };
    },
  },
  {
    name: 'a body value missing',
    fits: (plan) => plan.cards.some((c) => c.variable !== null),
    plant(send, plan) {
      const listed = send.cards.findIndex((c: Json) => plan.cards[c.card_index]!.variable !== null);
      send.cards[listed].components = send.cards[listed].components.filter((c: Json) => c.type !== 'body');
      return { path: `${SP}.cards[${listed}].components`, says: 'variable' };
    },
  },
  {
    name: 'a body value too many',
    fits: () => true,
    plant(send, _plan, at) {
      const card = send.cards[at];
      const body = card.components.find((c: Json) => c.type === 'body');
      if (body) body.parameters.push({ type: 'text', text: 'extra' });
      else card.components.push({ type: 'body', parameters: [{ type: 'text', text: 'extra' }] });
      const j = card.components.findIndex((c: Json) => c.type === 'body');
      return { path: `${SP}.cards[${at}].components[${j}].parameters`, says: 'variable' };
    },
  },
  {
    name: 'a quick-reply button left out (its payload with it)',
    fits: (plan) => plan.buttons.includes('QUICK_REPLY'),
    plant(send, _plan, at) {
      send.cards[at].components = send.cards[at].components.filter((c: Json) => c.sub_type !== 'quick_reply');
      return { path: `${SP}.cards[${at}].components`, says: 'payload' };
    },
  },
  {
    name: 'a button the card does not have',
    fits: (plan) => plan.buttons.length < 2,
    plant(send, _plan, at) {
      send.cards[at].components.push({ type: 'button', sub_type: 'quick_reply', index: 1, parameters: [{ type: 'payload', payload: 'nowhere' }] });
      return { path: `${SP}.cards[${at}].components[${send.cards[at].components.length - 1}].index`, says: 'not one of them' };
    },
  },
  {
    name: 'one card fewer than defined',
    fits: (plan) => plan.cards.length > 2,
    plant(send, plan) {
      send.cards = send.cards.filter((c: Json) => c.card_index !== plan.cards.length - 1);
      return { path: `${SP}.cards`, says: `the template has ${plan.cards.length} cards` };
    },
  },
];

describe('carousel send against the template’s definition (Graph: "the same number of cards as defined")', () => {
  for (const defect of MISFIT_DEFECTS) {
    test(`reported: ${defect.name}`, () => {
      fc.assert(
        fc.property(planArb.filter(defect.fits), fc.nat(), (plan, pick) => {
          const send = sendOf(plan);
          const { path, says } = defect.plant(send, plan, 1 + (pick % (plan.cards.length - 1)));
          // Alone the send is well formed; only the definition shows the misfit.
          expect(checkCarouselSend(send, SP)).toEqual([]);
          expect(reports(checkCarouselSend(send, SP, definitionOf(plan)), path, says)).toBe(true);
        }),
        { numRuns: 120 },
      );
    });
  }
});

// ---------------------------------------------------------------------------------------------

describe('carousel as plain text (spec 4.3: "on an unofficial connection a carousel degrades to plain text")', () => {
  test('one numbered paragraph per card in card_index order, with its filled-in body and its button labels', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const text = carouselAsText(sendOf(plan), definitionOf(plan))!;
        const paragraphs = text.split('\n\n');
        expect(paragraphs).toHaveLength(plan.cards.length);
        plan.cards.forEach((card, i) => {
          const lines = paragraphs[i]!.split('\n');
          expect(lines[0]).toBe(`${i + 1}. ${card.variable === null ? card.body : `${card.body} ${card.variable}`}`);
          expect(lines.slice(1)).toEqual(
            plan.buttons.map((type, k) =>
              type === 'URL' ? `   - ${card.labels[k]}: https://shop.example/item-${i}` : type === 'PHONE_NUMBER' ? `   - ${card.labels[k]}: +15550100000` : `   - ${card.labels[k]}`,
            ),
          );
        });
        // Payloads are ids for the tap, not words for the reader.
        expect(text).not.toContain('card-0-button');
      }),
      { numRuns: 200 },
    );
  });

  test('without the definition: each card’s body values, or "Card n"', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const paragraphs = carouselAsText(sendOf(plan))!.split('\n\n');
        expect(paragraphs).toEqual(plan.cards.map((card, i) => `${i + 1}. ${card.variable ?? `Card ${i + 1}`}`));
      }),
      { numRuns: 200 },
    );
  });
});
