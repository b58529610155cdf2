import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startGraphSimulator, type GraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates, type TemplateSimulator } from '../support/graph-simulator-templates.ts';
import { connectedConnection, eventually } from '../support/helpdesk.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * The carousels plugin end to end on an official (`cloud-api`) connection against the Graph
 * simulator (issue 9 item 2 and "Done when": "a user creates and sends a carousel template, a
 * customer tap arrives with its payload"), and the degraded text on a connection whose network
 * has no templates.
 *
 * Spec 4.3: "Carousel template: component type `CAROUSEL` with 2 to 10 cards; each card has a
 * media header (`example.header_handle`), a body and up to two buttons; all cards have the same
 * header format and same number and type of buttons. […] Each button carries its own `payload`
 * string, since the resulting event has no card index. Validation reports all offending fields
 * at once." Spec 6.1: "a carousel button tap arrives as `messages.upsert` with `messageType:
 * templateButtonReplyMessage` (`selectedId` is the payload sent)."
 */

let sim: GraphSimulator;
let templates: TemplateSimulator;
let connectionId: string;
let callbackUrl: string;
const receiver = useReceiver();
const HOOK_PATH = '/carousel-hook';

beforeAll(async () => {
  // The contacts' phones stay offline: after a send the platform posts `sent` only, so a send is SENT where tests look.
  sim = await startGraphSimulator({ displayPhoneNumber: '+1 555-010-7781', statusCallbacks: { upTo: 'sent' } });
  templates = teachTemplates(sim);
}, HOOK_TIMEOUT);

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  ({ connectionId, callbackUrl } = await officialConnection(service, sim, owner.token));
  const hook = await call('POST', '/v3/webhooks', { url: receiver.url(HOOK_PATH), events: ['messages.upsert'], connections: [connectionId] });
  expect(hook.status).toBe(201);
}, HOOK_TIMEOUT);

afterAll(async () => {
  await sim?.stop();
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });
const templatesPath = () => `/v3/connections/${connectionId}/templates`;

/** A small PNG, uploaded as the multipart `file` of header-media / send-media. */
async function upload(kind: 'header-media' | 'send-media'): Promise<any> {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const form = new FormData();
  form.set('file', new File([png], 'card.png', { type: 'image/png' }));
  const response = await fetch(`${service.url}${templatesPath()}/${kind}`, { method: 'POST', headers: { apikey: owner.token }, body: form });
  const body = await response.json();
  expect(response.status).toBe(201);
  return body;
}

function card(handle: string, body: string, buyUrl: string) {
  return {
    components: [
      { type: 'HEADER', format: 'IMAGE', example: { header_handle: [handle] } },
      { type: 'BODY', text: body, ...(body.includes('{{1}}') && { example: { body_text: [['15%']] } }) },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'More like this' },
          { type: 'URL', text: 'Buy', url: buyUrl },
        ],
      },
    ],
  };
}

let counter = 0;
const newContact = () => `4479${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++counter).padStart(2, '0')}`;

async function upserts(): Promise<any[]> {
  const rows = await service.runtime.ctx.db.selectFrom('events').selectAll().where('connection_id', '=', connectionId).where('event', '=', 'messages.upsert').execute();
  return rows.map((row) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload));
}

/** A send of `summer_carousel`: the template body's value, then per card its image, body value and two buttons. */
const sendBody = (to: string, mediaIds: string[], overrides: { cards?: any[] } = {}) => ({
  to,
  name: 'summer_carousel',
  language: 'en_US',
  components: [
    { type: 'body', parameters: [{ type: 'text', text: 'Dana' }] },
    {
      type: 'carousel',
      cards: overrides.cards ?? [0, 1].map((i) => ({
        card_index: i,
        components: [
          { type: 'header', parameters: [{ type: 'image', image: { id: mediaIds[i] } }] },
          { type: 'body', parameters: [{ type: 'text', text: `${10 + i}%` }] },
          { type: 'button', sub_type: 'quick_reply', index: 0, parameters: [{ type: 'payload', payload: `more-card-${i}` }] },
          { type: 'button', sub_type: 'url', index: 1, parameters: [{ type: 'text', text: `item-${i}` }] },
        ],
      })),
    },
  ],
});

// ------------------------------------------------------------------------------------------

test('the plugin teaches the base the CAROUSEL component', () => {
  // Issue 9: "carousels and Flows load as the `carousels` and `flows` plugins".
  expect(service.runtime.ctx.templateComponents?.get('CAROUSEL')?.plugin).toBe('carousels');
});

describe('a carousel template on an official connection', () => {
  let handles: string[];
  let templateId: string;
  let sentWamid: string;
  const contact = newContact();

  test('a definition with faults is refused, every offending field reported at once, and nothing reaches the platform', async () => {
    handles = [(await upload('header-media')).handle, (await upload('header-media')).handle];
    const before = sim.log.filter((l) => l.includes('message_templates')).length;
    const broken = card(handles[0]!, 'Lemons', 'https://shop.example/lemons');
    const res = await call('POST', templatesPath(), {
      name: 'summer_carousel_broken',
      language: 'en_US',
      category: 'MARKETING',
      components: [
        { type: 'BODY', text: 'Summer picks for you' },
        {
          type: 'CAROUSEL',
          cards: [
            broken,
            // Card 1: lower-case header type, no header_handle, one button where card 0 has two.
            { components: [{ type: 'header', format: 'IMAGE' }, { type: 'BODY', text: 'Limes' }, { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'More' }] }] },
            // Card 2: a VIDEO header where card 0 has IMAGE, and a lower-case quick_reply.
            {
              components: [
                { type: 'HEADER', format: 'VIDEO', example: { header_handle: [handles[1]] } },
                { type: 'BODY', text: 'Oranges' },
                { type: 'BUTTONS', buttons: [{ type: 'quick_reply', text: 'More' }, { type: 'URL', text: 'Buy', url: 'https://shop.example/oranges' }] },
              ],
            },
          ],
        },
      ],
    });
    expectStandardError(res, 400, 'Bad Request');
    const messages: string[] = res.body.message;
    const at = (path: string) => messages.some((m) => m.startsWith(`body.components[1].${path}: `));
    expect(at('cards[1].components[0].type')).toBe(true);
    expect(at('cards[1].components[0].example.header_handle')).toBe(true);
    expect(at('cards[1].components[2].buttons')).toBe(true);
    expect(at('cards[2].components[0].format')).toBe(true);
    expect(at('cards[2].components[2].buttons[0].type')).toBe(true);
    expect(sim.log.filter((l) => l.includes('message_templates')).length).toBe(before);
  });

  test('a valid carousel is created PENDING and becomes APPROVED on the platform’s callback', async () => {
    const res = await call('POST', templatesPath(), {
      name: 'summer_carousel',
      language: 'en_US',
      category: 'MARKETING',
      components: [
        { type: 'BODY', text: 'Summer picks for {{1}}', example: { body_text: [['Dana']] } },
        { type: 'CAROUSEL', cards: [card(handles[0]!, 'Rare lemons, {{1}} off', 'https://shop.example/{{1}}'), card(handles[1]!, 'Sweet limes, {{1}} off', 'https://shop.example/{{1}}')] },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('PENDING');
    templateId = res.body.id;
    // The platform got the carousel as defined (upper-case casing, as the Graph API takes it).
    const onPlatform = [...templates.templates.values()].find((t) => t.name === 'summer_carousel')!;
    expect((onPlatform.components[1] as any).type).toBe('CAROUSEL');
    expect((onPlatform.components[1] as any).cards).toHaveLength(2);
    expect((await templates.approve(onPlatform.id)).status).toBe(200);
    const approved = await eventually(async () => {
      const found = await call('GET', `${templatesPath()}/${templateId}`);
      return found.body.status === 'APPROVED' ? found.body : undefined;
    }, 'template APPROVED');
    expect(approved.rejected_reason).toBeNull();
  });

  test('a send with faults is refused with every problem at once, before any call goes out', async () => {
    const sentBefore = sim.sent.length;
    const res = await call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, sendBody(contact, [], {
      cards: [
        // Upper-case casing, a string index, no payload.
        { card_index: 0, components: [{ type: 'HEADER', parameters: [{ type: 'image', image: { id: '1' } }] }, { type: 'button', sub_type: 'QUICK_REPLY', index: '0', parameters: [{ type: 'payload' }] }] },
        // A card_index that is not an integer.
        { card_index: 1.5, components: [{ type: 'header', parameters: [{ type: 'image', image: { id: '2' } }] }] },
      ],
    }));
    expectStandardError(res, 400, 'Bad Request');
    const messages: string[] = res.body.message;
    for (const path of ['cards[0].components[0].type', 'cards[0].components[1].sub_type', 'cards[0].components[1].index', 'cards[0].components[1].parameters[0].payload', 'cards[1].card_index']) {
      expect(messages.some((m) => m.startsWith(`body.components[1].${path}: `))).toBe(true);
    }
    expect(sim.sent.length).toBe(sentBefore);
  });

  test('a carousel in a template not known here is still checked for its own shape before the call goes out', async () => {
    const sentBefore = sim.sent.length;
    const res = await call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, {
      ...sendBody(contact, [], { cards: [{ card_index: 0, components: [{ type: 'button', sub_type: 'quick_reply', index: 0, parameters: [{ type: 'payload' }] }] }] }),
      name: 'not_known_here',
    });
    expectStandardError(res, 400, 'Bad Request');
    expect((res.body.message as string[]).some((m) => m.startsWith('body.components[1].cards[0].components[0].parameters[0].payload: '))).toBe(true);
    expect(sim.sent.length).toBe(sentBefore);
  });

  test('a send that does not fit the approved carousel is refused: a card left out, a quick-reply button without its payload', async () => {
    // Graph: "An approved template can only be used to send the same number of cards as defined
    // during its creation"; spec 4.3: "Each button carries its own `payload` string".
    const sentBefore = sim.sent.length;
    const [first] = sendBody(contact, ['1', '2']).components[1]!.cards as any[];
    first.components = first.components.filter((c: any) => c.sub_type !== 'quick_reply');
    const res = await call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, sendBody(contact, [], { cards: [first] }));
    expectStandardError(res, 400, 'Bad Request');
    const messages: string[] = res.body.message;
    expect(messages.some((m) => m.startsWith('body.components[1].cards: ') && m.includes('the template has 2 cards'))).toBe(true);
    expect(messages.some((m) => m.startsWith('body.components[1].cards[0].components: ') && m.includes('payload'))).toBe(true);
    expect(sim.sent.length).toBe(sentBefore);
  });

  test('the carousel goes out as sent: lower-case casing, integer button index, a payload per button (201)', async () => {
    const mediaIds = [(await upload('send-media')).mediaId, (await upload('send-media')).mediaId];
    const body = sendBody(contact, mediaIds);
    const res = await call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, body);
    expect(res.status).toBe(201);
    const message = await eventually(async () => {
      const found = await call('GET', `/v3/connections/${connectionId}/chats/messages/${res.body.id}`);
      return found.body.status !== 'PENDING' ? found.body : undefined;
    }, 'send settled');
    expect(message.status).toBe('SENT');
    const out = sim.sent.find((m) => m.id === message.externalId)!;
    expect(out.body.type).toBe('template');
    expect(out.body.template).toEqual({ name: 'summer_carousel', language: { code: 'en_US' }, components: body.components });
    sentWamid = out.id;
  });

  test('a customer’s tap arrives as messages.upsert templateButtonReplyMessage whose selectedId is that card’s payload', async () => {
    // What the platform posts for a quick-reply tap on a template (a `button` message).
    const tap = await sim.deliverIncoming(callbackUrl, {
      from: contact,
      name: 'Dana',
      type: 'button',
      button: { payload: 'more-card-1', text: 'More like this' },
      context: { from: '15550107781', id: sentWamid },
    });
    expect(tap.status).toBe(200);
    const published = await eventually(async () => (await upserts()).find((e) => e.data.key.id === tap.messageId), 'messages.upsert');
    expect(published.data.messageType).toBe('templateButtonReplyMessage');
    expect(published.data.message.templateButtonReplyMessage.selectedId).toBe('more-card-1');
    expect(published.data.message.templateButtonReplyMessage.selectedDisplayText).toBe('More like this');
    // The connection webhook receives it too.
    const hit = await eventually(async () => {
      const hits = receiver.hits(HOOK_PATH).flatMap((h) => (Array.isArray(h.json) ? h.json : [h.json]));
      return hits.find((e: any) => e?.data?.key?.id === tap.messageId);
    }, 'webhook delivery');
    expect(hit.event).toBe('messages.upsert');
    expect(hit.data.message.templateButtonReplyMessage.selectedId).toBe('more-card-1');
  });
});

describe('on a connection whose network has no templates, a carousel degrades to plain text (spec 4.3)', () => {
  // Spec 4.3: "Carousel and Flow sends work only on official connections; on an unofficial
  // connection a carousel degrades to plain text and a Flow is refused." The sandbox network,
  // like the unofficial one, has no templates (capabilities.templates and .carousels false).
  let sandboxId: string;
  beforeAll(async () => {
    sandboxId = await connectedConnection(service, owner.token, 'no templates here');
  }, HOOK_TIMEOUT);
  const sendTemplate = (body: unknown) => call('POST', `/v3/connections/${sandboxId}/chats/messages/send-template`, body);

  async function settled(id: string) {
    return eventually(async () => {
      const found = await call('GET', `/v3/connections/${sandboxId}/chats/messages/${id}`);
      return found.body.status !== 'PENDING' ? found.body : undefined;
    }, 'send settled');
  }

  test('with the workspace’s definition known: the body, then each card numbered with its body and its buttons', async () => {
    // `summer_carousel` was created on the official connection of the same workspace above.
    const res = await sendTemplate(sendBody(newContact(), ['1', '2']));
    expect(res.status).toBe(201);
    expect(res.body.kind).toBe('text');
    expect(res.body.content.text).toBe(
      [
        'Summer picks for Dana',
        '1. Rare lemons, 10% off\n   - More like this\n   - Buy: https://shop.example/item-0',
        '2. Sweet limes, 11% off\n   - More like this\n   - Buy: https://shop.example/item-1',
      ].join('\n\n'),
    );
    expect((await settled(res.body.id)).status).toBe('SENT');
  });

  test('a template the workspace does not know degrades from the send’s own values', async () => {
    const res = await sendTemplate({ ...sendBody(newContact(), ['1', '2']), name: 'made_elsewhere' });
    expect(res.status).toBe(201);
    expect(res.body.kind).toBe('text');
    expect(res.body.content.text).toBe('Dana\n\n1. 10%\n\n2. 11%');
  });

  test('the degraded send is held to the same rules: against the known definition, or the carousel’s own shape when unknown (400, nothing sent)', async () => {
    const faulty = [
      { card_index: 0, components: [{ type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload' }] }] },
      { card_index: 0, components: [] },
    ];
    for (const name of ['summer_carousel', 'made_elsewhere']) {
      const res = await sendTemplate({ ...sendBody(newContact(), ['1', '2'], { cards: faulty }), name });
      expectStandardError(res, 400, 'Bad Request');
      const messages: string[] = res.body.message;
      expect(messages.some((m) => m.startsWith('body.components[1].cards[0].components[0].index: '))).toBe(true);
      expect(messages.some((m) => m.startsWith('body.components[1].cards[0].components[0].parameters[0].payload: '))).toBe(true);
    }
    // The known definition also wants its body variable.
    const known = await sendTemplate({ ...sendBody(newContact(), ['1', '2']), components: sendBody('x', ['1', '2']).components.slice(1) });
    expectStandardError(known, 400, 'Bad Request');
  });

  test('a template without a carousel is still refused (422)', async () => {
    const res = await sendTemplate({ to: newContact(), name: 'hello_world', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'Dana' }] }] });
    expectStandardError(res, 422, 'Unprocessable Entity');
  });
});
