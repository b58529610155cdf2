import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { createCloudApiDriver } from '../../adapters/drivers/cloud-api/index.ts';
import { DriverError, type DriverConnection, type DriverEvents, type NetworkDriver, type OutgoingMedia } from '../../core/connections/driver.ts';
import { toMessageData, type IncomingMessageData, type ReceivedMessage } from '../../core/messaging/incoming.ts';
import type { OutgoingContent, OutgoingMessage } from '../../core/messaging/outgoing.ts';
import { DomainError } from '../../core/shared/errors.ts';
import { startGraphSimulator, type GraphSimulator, type IncomingInput } from '../support/graph-simulator.ts';

/**
 * The `cloud-api` driver against a local Graph API simulator that answers like the real one
 * (ARCHITECTURE.md: "tests run it against a local Graph API simulator (`tests/support/`) that
 * answers like the real one and sends signed callbacks back to `/v3/webhooks/whatsapp/{connectionId}`").
 * A small callback server stands in for the HTTP adapter of that path and runs the driver's
 * `callbacks` exactly as the service would: verify (GET), authentic + ingest (POST).
 */

type Receipt = Parameters<DriverEvents['receipt']>[0];
type Status = Parameters<DriverEvents['status']>[0];

interface Recorder extends DriverEvents {
  statuses: Status[];
  messages: ReceivedMessage[];
  receipts: Receipt[];
  passthroughs: unknown[];
}

function recorder(): Recorder {
  const r: Recorder = {
    statuses: [],
    messages: [],
    receipts: [],
    passthroughs: [],
    async status(update) {
      r.statuses.push(update);
    },
    async message(message) {
      r.messages.push(message);
    },
    async receipt(update) {
      r.receipts.push(update);
    },
    async passthrough(event, remoteJid, data) {
      r.passthroughs.push({ event, remoteJid, data });
    },
  };
  return r;
}

const CONTACT = '5511999990001';
const TS = 1_750_000_000;

let sim: GraphSimulator;
let driver: NetworkDriver;
let connection: DriverConnection;
let events: Recorder;
let callbackServer: ReturnType<typeof Bun.serve>;
let callbackUrl: string;
/** What each POST to the callback answered with: the `ingest` result. */
let ingested: boolean[];

beforeAll(async () => {
  sim = await startGraphSimulator({ displayPhoneNumber: '+1 555-010-4477' });
  driver = createCloudApiDriver({ baseUrl: sim.baseUrl, apiVersion: 'v23.0' });
  connection = {
    id: 'connection-1',
    workspaceId: 'workspace-1',
    phoneNumber: null,
    credentials: driver.prepareCredentials!({
      phoneNumberId: sim.phoneNumberId,
      businessAccountId: sim.businessAccountId,
      accessToken: sim.accessToken,
      appSecret: sim.appSecret,
      verifyToken: sim.verifyToken,
    }),
  };
  callbackServer = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== `/v3/webhooks/whatsapp/${connection.id}`) return new Response('Not Found', { status: 404 });
      if (request.method === 'GET') {
        const challenge = driver.callbacks!.verify(connection, Object.fromEntries(url.searchParams));
        return challenge === undefined ? new Response('Forbidden', { status: 403 }) : new Response(challenge);
      }
      const raw = await request.text();
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => {
        headers[key] = value;
      });
      if (!driver.callbacks!.authentic(connection, raw, headers)) return new Response('Unauthorized', { status: 401 });
      ingested.push(await driver.callbacks!.ingest(connection, JSON.parse(raw), events));
      return new Response('OK');
    },
  });
  callbackUrl = `http://127.0.0.1:${callbackServer.port}/v3/webhooks/whatsapp/${connection.id}`;
});

afterAll(async () => {
  await sim?.stop();
  callbackServer?.stop(true);
});

beforeEach(() => {
  events = recorder();
  ingested = [];
});

function message(content: OutgoingContent, replyToExternalId?: string): OutgoingMessage {
  return replyToExternalId ? { to: CONTACT, content, replyToExternalId } : { to: CONTACT, content };
}

/** Sends, checks the simulator accepted exactly that message, and returns the Graph body it received. */
async function sentBody(outgoing: OutgoingMessage, media?: OutgoingMedia): Promise<Record<string, any>> {
  const before = sim.sent.length;
  const result = await driver.send(connection, outgoing, media);
  expect(sim.sent.length).toBe(before + 1);
  const last = sim.sent.at(-1)!;
  expect(result.externalId).toBe(last.id);
  expect(result.externalId).toStartWith('wamid.');
  return last.body;
}

const envelope = { messaging_product: 'whatsapp', recipient_type: 'individual', to: CONTACT };

async function caught(promise: Promise<unknown>): Promise<DriverError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DriverError);
    return error as DriverError;
  }
  throw new Error('expected a DriverError');
}

describe('driver identity and credentials', () => {
  test('name and capabilities of the official driver', () => {
    expect(driver.name).toBe('cloud-api');
    // Spec 1.8: "Carousel templates and Flows (in-chat forms) exist only on official connections."
    // Spec 3.4: the send window applies to official connections.
    expect(driver.capabilities).toEqual({ official: true, sendWindow: true, templates: true, carousels: true, flows: true, typing: true, pairing: 'credentials' });
  });

  test('prepareCredentials keeps the known fields, trimmed; appSecret is optional', () => {
    const prepared = driver.prepareCredentials!({ phoneNumberId: ' 106540352242922 ', businessAccountId: '102290129340398', accessToken: 'EAAJB', verifyToken: 'v', appSecret: '', extra: 'x' });
    expect(prepared).toEqual({ phoneNumberId: '106540352242922', businessAccountId: '102290129340398', accessToken: 'EAAJB', verifyToken: 'v' });
  });

  test('prepareCredentials reports every missing or invalid field at once (400)', () => {
    let error: unknown;
    try {
      driver.prepareCredentials!({ phoneNumberId: '+1 555', businessAccountId: 12, accessToken: ' ', appSecret: 7 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    const domain = error as DomainError;
    expect(domain.kind).toBe('invalid_input');
    expect(domain.messages).toHaveLength(5);
    for (const field of ['phoneNumberId', 'businessAccountId', 'accessToken', 'verifyToken', 'appSecret']) {
      expect(domain.messages!.some((m) => m.startsWith(field))).toBe(true);
    }
  });
});

describe('connect', () => {
  test('valid credentials open the connection with the number the platform reports', async () => {
    await driver.connect(connection, events);
    expect(events.statuses).toEqual([{ event: 'opened', phoneNumber: '15550104477' }]);
    expect(sim.log.at(-1)).toBe(`GET /v23.0/${sim.phoneNumberId}`);
  });

  test('an invalid token (190) logs the connection out with the reason, no QR', async () => {
    const revoked = { ...connection, credentials: { ...connection.credentials, accessToken: 'EAAexpired' } };
    await driver.connect(revoked, events);
    expect(events.statuses).toHaveLength(1);
    expect(events.statuses[0]!.event).toBe('loggedOut');
    expect(events.statuses[0]!.reason).toContain('Invalid OAuth access token');
    expect(events.statuses[0]!.qr).toBeUndefined();
  });

  test('an unknown phone number id logs out too', async () => {
    const wrong = { ...connection, credentials: { ...connection.credentials, phoneNumberId: '111111111111111' } };
    await driver.connect(wrong, events);
    expect(events.statuses[0]!.event).toBe('loggedOut');
    expect(events.statuses[0]!.reason).toContain("Object with ID '111111111111111' does not exist");
  });

  test('an unreachable API reports dropped and throws a retryable error', async () => {
    const offline = createCloudApiDriver({ baseUrl: 'http://127.0.0.1:1' });
    const error = await caught(offline.connect(connection, events));
    expect(error.retryable).toBe(true);
    expect(error.code).toBe('NETWORK');
    expect(events.statuses.map((s) => s.event)).toEqual(['dropped']);
  });

  test('disconnect has nothing to close', async () => {
    await driver.disconnect(connection, { logout: true });
    expect(events.statuses).toEqual([]);
  });
});

describe('send: every outgoing kind becomes the documented Graph body', () => {
  test('text with preview_url', async () => {
    expect(await sentBody(message({ kind: 'text', text: 'See https://example.com', previewUrl: true }))).toEqual({
      ...envelope,
      type: 'text',
      text: { body: 'See https://example.com', preview_url: true },
    });
  });

  test('a reply carries context.message_id', async () => {
    expect(await sentBody(message({ kind: 'text', text: 'Yes' }, 'wamid.QUOTED'))).toEqual({
      ...envelope,
      type: 'text',
      text: { body: 'Yes' },
      context: { message_id: 'wamid.QUOTED' },
    });
  });

  test('a JID recipient is sent as its number', async () => {
    const body = await sentBody({ to: `${CONTACT}@s.whatsapp.net`, content: { kind: 'text', text: 'Hi' } });
    expect(body.to).toBe(CONTACT);
  });

  test('image by link (content url) with caption', async () => {
    expect(await sentBody(message({ kind: 'image', image: { url: 'https://cdn.example.com/a.jpg', caption: 'A' } }))).toEqual({
      ...envelope,
      type: 'image',
      image: { link: 'https://cdn.example.com/a.jpg', caption: 'A' },
    });
  });

  test('image by a Cloud API media id (content mediaId, e.g. from templates/send-media)', async () => {
    const id = sim.addMedia(new Uint8Array([1, 2, 3]), 'image/png');
    expect(await sentBody(message({ kind: 'image', image: { mediaId: id } }))).toEqual({ ...envelope, type: 'image', image: { id } });
  });

  test('video by a URL the service resolved', async () => {
    const body = await sentBody(message({ kind: 'video', video: { mediaId: 'service-upload-1', caption: 'Clip' } }), { url: 'https://files.example.com/v.mp4', mimetype: 'video/mp4' });
    expect(body).toEqual({ ...envelope, type: 'video', video: { link: 'https://files.example.com/v.mp4', caption: 'Clip' } });
  });

  test('audio as a voice note sets voice: true', async () => {
    expect(await sentBody(message({ kind: 'audio', audio: { url: 'https://cdn.example.com/v.ogg', voiceNote: true } }))).toEqual({
      ...envelope,
      type: 'audio',
      audio: { link: 'https://cdn.example.com/v.ogg', voice: true },
    });
    expect(await sentBody(message({ kind: 'audio', audio: { url: 'https://cdn.example.com/s.mp3' } }))).toEqual({
      ...envelope,
      type: 'audio',
      audio: { link: 'https://cdn.example.com/s.mp3' },
    });
  });

  test('document with filename and caption', async () => {
    expect(await sentBody(message({ kind: 'document', document: { url: 'https://cdn.example.com/r.pdf', fileName: 'report.pdf', caption: 'Q3' } }))).toEqual({
      ...envelope,
      type: 'document',
      document: { link: 'https://cdn.example.com/r.pdf', filename: 'report.pdf', caption: 'Q3' },
    });
  });

  test('sticker', async () => {
    expect(await sentBody(message({ kind: 'sticker', sticker: { url: 'https://cdn.example.com/s.webp' } }))).toEqual({
      ...envelope,
      type: 'sticker',
      sticker: { link: 'https://cdn.example.com/s.webp' },
    });
  });

  test('location', async () => {
    expect(await sentBody(message({ kind: 'location', location: { latitude: -23.55, longitude: -46.63, name: 'Office', address: 'Av. Paulista 1000' } }))).toEqual({
      ...envelope,
      type: 'location',
      location: { latitude: -23.55, longitude: -46.63, name: 'Office', address: 'Av. Paulista 1000' },
    });
  });

  test('contacts: formatted_name plus a name part, phones, emails, org', async () => {
    const body = await sentBody(
      message({ kind: 'contacts', contacts: [{ name: 'Ana Maria Souza', phones: ['+5511988887777'], emails: ['ana@example.com'], organization: 'Acme' }, { name: 'Bob', phones: ['+15550001111'] }] }),
    );
    expect(body).toEqual({
      ...envelope,
      type: 'contacts',
      contacts: [
        {
          name: { formatted_name: 'Ana Maria Souza', first_name: 'Ana', last_name: 'Maria Souza' },
          phones: [{ phone: '+5511988887777', type: 'CELL' }],
          emails: [{ email: 'ana@example.com', type: 'WORK' }],
          org: { company: 'Acme' },
        },
        { name: { formatted_name: 'Bob', first_name: 'Bob' }, phones: [{ phone: '+15550001111', type: 'CELL' }] },
      ],
    });
  });

  test('list → interactive list', async () => {
    const body = await sentBody(
      message({
        kind: 'list',
        list: {
          header: 'Menu',
          body: 'Pick one',
          footer: 'Thanks',
          buttonText: 'Options',
          sections: [{ title: 'Plans', rows: [{ id: 'basic', title: 'Basic', description: 'For one' }, { id: 'pro', title: 'Pro' }] }],
        },
      }),
    );
    expect(body).toEqual({
      ...envelope,
      type: 'interactive',
      interactive: {
        type: 'list',
        header: { type: 'text', text: 'Menu' },
        body: { text: 'Pick one' },
        footer: { text: 'Thanks' },
        action: { button: 'Options', sections: [{ title: 'Plans', rows: [{ id: 'basic', title: 'Basic', description: 'For one' }, { id: 'pro', title: 'Pro' }] }] },
      },
    });
  });

  test('buttons → interactive button with reply buttons', async () => {
    const body = await sentBody(message({ kind: 'buttons', buttons: { body: 'Confirm?', buttons: [{ id: 'yes', title: 'Yes' }, { id: 'no', title: 'No' }] } }));
    expect(body).toEqual({
      ...envelope,
      type: 'interactive',
      interactive: {
        type: 'button',
        body: { text: 'Confirm?' },
        action: { buttons: [{ type: 'reply', reply: { id: 'yes', title: 'Yes' } }, { type: 'reply', reply: { id: 'no', title: 'No' } }] },
      },
    });
  });

  test('reaction (never with context)', async () => {
    expect(await sentBody(message({ kind: 'reaction', reaction: { messageId: 'wamid.TARGET', emoji: '👍' } }, 'wamid.TARGET'))).toEqual({
      ...envelope,
      type: 'reaction',
      reaction: { message_id: 'wamid.TARGET', emoji: '👍' },
    });
  });

  test('template with components (spec 4.3: sending casing is lower, button index an integer)', async () => {
    const components = [
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/h.jpg' } }] },
      { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
      { type: 'button', sub_type: 'quick_reply', index: 0, parameters: [{ type: 'payload', payload: 'STOP' }] },
    ];
    expect(await sentBody(message({ kind: 'template', template: { name: 'order_update', language: 'en_US', components } }))).toEqual({
      ...envelope,
      type: 'template',
      template: { name: 'order_update', language: { code: 'en_US' }, components },
    });
  });

  test('media with bytes is uploaded first (POST /media multipart) and sent by id', async () => {
    const bytes = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31]);
    const logStart = sim.log.length;
    const body = await sentBody(message({ kind: 'document', document: { mediaId: 'service-upload-2', caption: 'Invoice' } }), { bytes, mimetype: 'application/pdf', fileName: 'invoice.pdf' });
    const id = body.document.id as string;
    expect(body).toEqual({ ...envelope, type: 'document', document: { id, filename: 'invoice.pdf', caption: 'Invoice' } });
    const stored = sim.media.get(id)!;
    expect(stored.bytes).toEqual(bytes);
    expect(stored.mimeType).toBe('application/pdf');
    expect(stored.fileName).toBe('invoice.pdf');
    expect(sim.log.slice(logStart)).toEqual([`POST /v23.0/${sim.phoneNumberId}/media`, `POST /v23.0/${sim.phoneNumberId}/messages`]);
  });
});

describe('send failures as DriverError', () => {
  test('throughput throttling (130429, HTTP 429) is retryable; the next send goes through', async () => {
    sim.throttleNext(1);
    const before = sim.sent.length;
    const error = await caught(driver.send(connection, message({ kind: 'text', text: 'one' })));
    expect(error.code).toBe(130429);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('Rate limit hit');
    expect(sim.sent.length).toBe(before);
    await sentBody(message({ kind: 'text', text: 'one' }));
  });

  test('pair rate limit (131056) is retryable even with HTTP 400: the code decides', async () => {
    sim.throttleNext(1, { code: 131056, httpStatus: 400 });
    const error = await caught(driver.send(connection, message({ kind: 'text', text: 'two' })));
    expect(error.code).toBe(131056);
    expect(error.retryable).toBe(true);
  });

  test('an invalid parameter (100) is not retryable and names the parameter', async () => {
    const list = { kind: 'list' as const, list: { body: 'b', buttonText: 'A button text far too long', sections: [{ title: 's', rows: [{ id: 'r', title: 'R' }] }] } };
    const error = await caught(driver.send(connection, message(list)));
    expect(error.code).toBe(100);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("interactive['action']['button']");
  });

  test('an invalid token (190) is not retryable', async () => {
    const revoked = { ...connection, credentials: { ...connection.credentials, accessToken: 'EAAexpired' } };
    const error = await caught(driver.send(revoked, message({ kind: 'text', text: 'x' })));
    expect(error.code).toBe(190);
    expect(error.retryable).toBe(false);
  });

  test('5xx answers and "something went wrong" (131000) are retryable; network errors too', async () => {
    const failing = (status: number, body: string) => createCloudApiDriver({ baseUrl: sim.baseUrl, fetch: async () => new Response(body, { status }) });
    const coded = await caught(failing(500, JSON.stringify({ error: { message: '(#131000) Something went wrong', type: 'OAuthException', code: 131000, fbtrace_id: 'x' } })).send(connection, message({ kind: 'text', text: 'x' })));
    expect([coded.code, coded.retryable]).toEqual([131000, true]);
    const plain = await caught(failing(503, 'Service Unavailable').send(connection, message({ kind: 'text', text: 'x' })));
    expect([plain.code, plain.retryable]).toEqual(['HTTP_503', true]);
    const offline = await caught(createCloudApiDriver({ baseUrl: 'http://127.0.0.1:1' }).send(connection, message({ kind: 'text', text: 'x' })));
    expect([offline.code, offline.retryable]).toEqual(['NETWORK', true]);
  });

  test('our message id goes out as biz_opaque_callback_data; the status callbacks hand it back as clientMessageId', async () => {
    // Issue 24: in-doubt sends are settled by "the status callbacks that come back for a network id we never recorded".
    const clientMessageId = '01936f1e-8b7c-7def-8123-456789abcdef';
    sim.callbackUrl = callbackUrl;
    sim.statusCallbacks = { upTo: 'read', delayMs: 1 };
    try {
      const body = await sentBody({ ...message({ kind: 'text', text: 'tracked' }), clientMessageId });
      expect(body).toEqual({ ...envelope, type: 'text', text: { body: 'tracked' }, biz_opaque_callback_data: clientMessageId });
      const externalId = sim.sent.at(-1)!.id;
      await sim.settle();
      // `sent`, `delivered`, `read`, as the platform posts them, each with the send's opaque data.
      const remoteJid = `${CONTACT}@s.whatsapp.net`;
      expect(events.receipts).toEqual(['SENT', 'DELIVERED', 'READ'].map((status) => ({ externalId, remoteJid, status, clientMessageId })) as any);
    } finally {
      sim.callbackUrl = undefined;
    }
  });

  test('a group recipient is refused before any call', async () => {
    const error = await caught(driver.send(connection, { to: '120363000000000000@g.us', content: { kind: 'text', text: 'x' } }));
    expect([error.code, error.retryable]).toEqual(['UNSUPPORTED_RECIPIENT', false]);
  });

  test('closed window: the send is accepted, then a failed status 131047 arrives as a signed callback', async () => {
    // Spec 3.4: "24 h pass since contact's last message → Window closed: ... only a pre-approved template may be sent."
    // Spec 6.1: "failures appear in `statuses[].errors` (code `131047` means the 24-hour window is closed)".
    const waId = '5511999990002';
    sim.callbackUrl = callbackUrl;
    sim.closeWindowFor(waId);
    try {
      const { externalId } = await driver.send(connection, { to: waId, content: { kind: 'text', text: 'Hello again' } });
      await sim.settle();
      expect(events.receipts).toEqual([
        { externalId, remoteJid: `${waId}@s.whatsapp.net`, status: 'FAILED', error: { code: 131047, title: 'Re-engagement message' } },
      ]);
      // A template is allowed outside the window: no failure follows (the platform's sent, delivered, read do).
      const template = await driver.send(connection, { to: waId, content: { kind: 'template', template: { name: 'hello_world', language: 'en_US' } } });
      await sim.settle();
      expect(events.receipts.filter((r) => r.status === 'FAILED')).toHaveLength(1);
      expect(events.receipts.slice(1).map((r) => [r.externalId, r.status])).toEqual([
        [template.externalId, 'SENT'],
        [template.externalId, 'DELIVERED'],
        [template.externalId, 'READ'],
      ]);
    } finally {
      sim.openWindowFor(waId);
      sim.callbackUrl = undefined;
    }
  });
});

describe('fetchMedia and typing', () => {
  test('fetchMedia returns the uploaded bytes and their type (GET /{media-id}, then its url with the token)', async () => {
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
    const body = await sentBody(message({ kind: 'image', image: { mediaId: 'service-upload-3' } }), { bytes, mimetype: 'image/png' });
    const fetched = await driver.fetchMedia(connection, body.image.id);
    expect(fetched.bytes).toEqual(bytes);
    expect(fetched.mimetype).toBe('image/png');
  });

  test('fetchMedia of an unknown id is a non-retryable media_gone error (the platform answers code 100)', async () => {
    const error = await caught(driver.fetchMedia(connection, '999999999999999'));
    expect([error.code, error.retryable]).toEqual(['media_gone', false]);
  });

  test('fetchMedia while the platform is down is a retryable error, not media_gone', async () => {
    const id = sim.addMedia(new Uint8Array([1, 2, 3]), 'image/png');
    sim.outageNext(1);
    const error = await caught(driver.fetchMedia(connection, id));
    expect([error.code, error.retryable]).toEqual([2, true]);
  });

  test('typing marks the last received message read with typing_indicator, only when its id is given', async () => {
    const before = sim.marks.length;
    await driver.sendTyping!(connection, CONTACT, true);
    await driver.sendTyping!(connection, CONTACT, false, 'wamid.LAST');
    expect(sim.marks.length).toBe(before);
    await driver.sendTyping!(connection, CONTACT, true, 'wamid.LAST');
    expect(sim.marks.at(-1)).toEqual({ messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.LAST', typing_indicator: { type: 'text' } });
  });
});

describe('provider callbacks: verification and signature', () => {
  test('verify handshake echoes the challenge for the right token only', async () => {
    // Spec 4.5: "`/v3/webhooks/msgnet/{connectionId}` — platform verify token (GET); `x-hub-signature-256` (POST)".
    expect((await sim.verifyCallback(callbackUrl)).ok).toBe(true);
    const wrong = await sim.verifyCallback(callbackUrl, 'not-the-token');
    expect([wrong.status, wrong.ok]).toEqual([403, false]);
    const verify = driver.callbacks!.verify;
    expect(verify(connection, { 'hub.mode': 'unsubscribe', 'hub.verify_token': sim.verifyToken, 'hub.challenge': '1' })).toBeUndefined();
    expect(verify(connection, { 'hub.mode': 'subscribe', 'hub.verify_token': sim.verifyToken, 'hub.challenge': '42' })).toBe('42');
  });

  test('authentic checks x-hub-signature-256 over the raw body when an app secret is set', () => {
    // Spec 5.6: "POST: `x-hub-signature-256` when an app secret is configured, otherwise no HMAC is required".
    const { rawBody, headers } = sim.webhook({ statuses: [] });
    const authentic = driver.callbacks!.authentic;
    expect(authentic(connection, rawBody, headers)).toBe(true);
    expect(authentic(connection, rawBody, { 'X-Hub-Signature-256': headers['x-hub-signature-256'] })).toBe(true);
    expect(authentic(connection, `${rawBody} `, headers)).toBe(false);
    expect(authentic(connection, rawBody, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` })).toBe(false);
    expect(authentic(connection, rawBody, { 'x-hub-signature-256': 'sha256=zz' })).toBe(false);
    expect(authentic(connection, rawBody, {})).toBe(false);
    const { appSecret: _, ...withoutSecret } = connection.credentials;
    expect(authentic({ ...connection, credentials: withoutSecret }, rawBody, {})).toBe(true);
  });

  test('a wrongly signed callback is refused over HTTP and nothing is ingested', async () => {
    const { rawBody } = sim.incoming({ from: CONTACT, type: 'text', text: { body: 'hi' } });
    const response = await fetch(callbackUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'a'.repeat(64)}` }, body: rawBody });
    expect(response.status).toBe(401);
    expect(events.messages).toEqual([]);
  });
});

describe('ingest: incoming messages in the closed 2.13 shape', () => {
  /** Delivers one signed message through the callback URL and returns its 2.13 `data`. */
  async function incoming(input: Omit<IncomingInput, 'from' | 'timestamp'>, options: { downloadMediaUrl?: string } = {}) {
    const answer = await sim.deliverIncoming(callbackUrl, { from: CONTACT, name: 'Maria', timestamp: TS, ...input } as IncomingInput);
    expect(answer.status).toBe(200);
    expect(ingested).toEqual([true]);
    expect(events.messages).toHaveLength(1);
    const received = events.messages[0]!;
    return { received, data: toMessageData(received, options), id: answer.messageId, payload: answer.payload as any };
  }

  /** 2.13: "Always-present keys: key.id, key.remoteJid, key.fromMe, pushName, status, messageType, message, messageTimestamp, source, isAiMessage". */
  function closed(id: string, messageType: string, node: Record<string, unknown>): IncomingMessageData {
    return {
      key: { id, remoteJid: `${CONTACT}@s.whatsapp.net`, fromMe: false },
      pushName: 'Maria',
      status: 'DELIVERY_ACK',
      messageType,
      message: node,
      messageTimestamp: TS,
      source: 'unknown',
      isAiMessage: false,
    };
  }

  test('text → conversation, no contextInfo when not a reply', async () => {
    const { data, id } = await incoming({ type: 'text', text: { body: 'Does it come in blue?' } });
    // 2.13: "`conversation` (node `{ conversation: <text> }`)"; "Conditional keys (absent, not null, when they do not apply)".
    expect(data).toStrictEqual(closed(id, 'conversation', { conversation: 'Does it come in blue?' }));
    expect('contextInfo' in data).toBe(false);
    expect(Number.isInteger(data.messageTimestamp)).toBe(true);
  });

  test('a reply carries contextInfo with the quoted id; a forwarded message does not', async () => {
    // 2.13: "`contextInfo` — the message is a reply or has mentions".
    const business = sim.displayPhoneNumber.replace(/\D/g, '');
    const { data, id } = await incoming({ type: 'text', text: { body: 'Yes' }, context: { from: business, id: 'wamid.ORIGINAL' } });
    expect(data).toStrictEqual({ ...closed(id, 'conversation', { conversation: 'Yes' }), contextInfo: { stanzaId: 'wamid.ORIGINAL', participant: `${business}@s.whatsapp.net` } });
    events = recorder();
    ingested = [];
    const forwarded = await incoming({ type: 'text', text: { body: 'fwd' }, context: { forwarded: true } });
    expect('contextInfo' in forwarded.data).toBe(false);
  });

  test('image → imageMessage with caption and mimetype; the media ref is the provider media id', async () => {
    const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2]);
    const { data, id, received, payload } = await incoming({ type: 'image', image: { bytes, mime_type: 'image/jpeg', caption: 'A photo' } }, { downloadMediaUrl: 'https://switchboard.example/dl' });
    // 2.13: "`imageMessage` (node `imageMessage` with `mimetype`, `downloadMediaUrl`)";
    // "`downloadMediaUrl` ... on an official connection only when the provider returned a media id".
    expect(data).toStrictEqual(closed(id, 'imageMessage', { imageMessage: { caption: 'A photo', mimetype: 'image/jpeg', downloadMediaUrl: 'https://switchboard.example/dl' } }));
    const mediaId = payload.entry[0].changes[0].value.messages[0].image.id;
    expect(received.media).toEqual({ ref: mediaId, mimetype: 'image/jpeg' });
    expect((await driver.fetchMedia(connection, received.media!.ref)).bytes).toEqual(bytes);
  });

  test('video, voice audio, document, sticker', async () => {
    const video = await incoming({ type: 'video', video: { bytes: new Uint8Array([1]), mime_type: 'video/mp4', caption: 'Clip' } });
    expect(video.data.message).toStrictEqual({ videoMessage: { caption: 'Clip', mimetype: 'video/mp4' } });
    events = recorder();
    ingested = [];
    const voice = await incoming({ type: 'audio', audio: { bytes: new Uint8Array([2]), mime_type: 'audio/ogg; codecs=opus', voice: true } });
    expect(voice.data).toStrictEqual(closed(voice.id, 'audioMessage', { audioMessage: { ptt: true, mimetype: 'audio/ogg; codecs=opus' } }));
    events = recorder();
    ingested = [];
    const doc = await incoming({ type: 'document', document: { bytes: new Uint8Array([3]), mime_type: 'application/pdf', filename: 'r.pdf', caption: 'Report' } });
    expect(doc.data.message).toStrictEqual({ documentMessage: { fileName: 'r.pdf', caption: 'Report', mimetype: 'application/pdf' } });
    expect(doc.received.media?.fileName).toBe('r.pdf');
    events = recorder();
    ingested = [];
    const sticker = await incoming({ type: 'sticker', sticker: { bytes: new Uint8Array([4]), mime_type: 'image/webp', animated: false } });
    expect(sticker.data.message).toStrictEqual({ stickerMessage: { isAnimated: false, mimetype: 'image/webp' } });
  });

  test('location → locationMessage', async () => {
    const { data, id } = await incoming({ type: 'location', location: { latitude: 37.483, longitude: -122.148, name: 'HQ', address: '1 Hacker Way' } });
    expect(data).toStrictEqual(closed(id, 'locationMessage', { locationMessage: { degreesLatitude: 37.483, degreesLongitude: -122.148, name: 'HQ', address: '1 Hacker Way' } }));
  });

  test('one contact card → contactMessage with a vCard; several → contactsArrayMessage', async () => {
    const card = {
      name: { formatted_name: 'Barbara J. Johnson', first_name: 'Barbara', last_name: 'Johnson' },
      phones: [{ phone: '+1 650-555-9999', type: 'CELL', wa_id: '16505559999' }],
      emails: [{ email: 'bjohnson@example.com', type: 'WORK' }],
      org: { company: 'Lucky Shrub', title: 'Counsel' },
    };
    const vcard = [
      'BEGIN:VCARD',
      'VERSION:3.0',
      'N:Johnson;Barbara;;;',
      'FN:Barbara J. Johnson',
      'ORG:Lucky Shrub;',
      'TITLE:Counsel',
      'TEL;type=CELL;waid=16505559999:+1 650-555-9999',
      'EMAIL;type=WORK:bjohnson@example.com',
      'END:VCARD',
    ].join('\n');
    const one = await incoming({ type: 'contacts', contacts: [card] });
    expect(one.data).toStrictEqual(closed(one.id, 'contactMessage', { contactMessage: { displayName: 'Barbara J. Johnson', vcard } }));
    events = recorder();
    ingested = [];
    const two = await incoming({ type: 'contacts', contacts: [card, { name: { formatted_name: 'Bob', first_name: 'Bob' }, phones: [{ phone: '+15550001111' }] }] });
    expect(two.data.messageType).toBe('contactsArrayMessage');
    expect(two.data.message).toStrictEqual({
      contactsArrayMessage: {
        displayName: '2 contacts',
        contacts: [
          { displayName: 'Barbara J. Johnson', vcard },
          { displayName: 'Bob', vcard: 'BEGIN:VCARD\nVERSION:3.0\nN:;Bob;;;\nFN:Bob\nTEL:+15550001111\nEND:VCARD' },
        ],
      },
    });
  });

  test('interactive button_reply → buttonsResponseMessage (a reply to the buttons message)', async () => {
    const { data, id } = await incoming({ type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } }, context: { from: '15550104477', id: 'wamid.BUTTONS' } });
    expect(data).toStrictEqual({
      ...closed(id, 'buttonsResponseMessage', { buttonsResponseMessage: { selectedButtonId: 'yes', selectedDisplayText: 'Yes' } }),
      contextInfo: { stanzaId: 'wamid.BUTTONS', participant: '15550104477@s.whatsapp.net' },
    });
  });

  test('interactive list_reply → listResponseMessage', async () => {
    const { data } = await incoming({ type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'pro', title: 'Pro', description: 'For teams' } } });
    expect(data.message).toStrictEqual({ listResponseMessage: { title: 'Pro', description: 'For teams', singleSelectReply: { selectedRowId: 'pro' } } });
  });

  test('interactive nfm_reply (Flow submission) → interactiveResponseMessage with paramsJson as a string', async () => {
    // Spec 6.1: "A Flow submission arrives as `messages.upsert` with `messageType: interactiveResponseMessage`
    // (`nativeFlowResponseMessage.paramsJson` is a string to parse)".
    const responseJson = JSON.stringify({ flow_token: 'ft_123', email: 'a@example.com' });
    const { data } = await incoming({ type: 'interactive', interactive: { type: 'nfm_reply', nfm_reply: { name: 'flow', body: 'Sent', response_json: responseJson } }, context: { from: '15550104477', id: 'wamid.FLOW' } });
    expect(data.messageType).toBe('interactiveResponseMessage');
    expect(data.message).toStrictEqual({ interactiveResponseMessage: { nativeFlowResponseMessage: { name: 'flow', paramsJson: responseJson } } });
    const node = (data.message.interactiveResponseMessage as any).nativeFlowResponseMessage;
    expect(JSON.parse(node.paramsJson).flow_token).toBe('ft_123');
    expect(data.contextInfo).toEqual({ stanzaId: 'wamid.FLOW', participant: '15550104477@s.whatsapp.net' });
  });

  test('button (template quick reply, carousel tap) → templateButtonReplyMessage with selectedId = payload', async () => {
    // Spec 6.1: "a carousel button tap arrives as `messages.upsert` with `messageType: templateButtonReplyMessage` (`selectedId` is the payload sent)".
    const { data } = await incoming({ type: 'button', button: { payload: 'CARD_2_BUY', text: 'Buy' }, context: { from: '15550104477', id: 'wamid.TEMPLATE' } });
    expect(data.message).toStrictEqual({ templateButtonReplyMessage: { selectedId: 'CARD_2_BUY', selectedDisplayText: 'Buy' } });
  });

  test('reaction → reactionMessage', async () => {
    const { data, id } = await incoming({ type: 'reaction', reaction: { message_id: 'wamid.MINE', emoji: '❤️' } });
    expect(data).toStrictEqual(closed(id, 'reactionMessage', { reactionMessage: { key: { id: 'wamid.MINE', remoteJid: `${CONTACT}@s.whatsapp.net` }, text: '❤️' } }));
  });

  test('unsupported and other unknown types keep their name with an empty node', async () => {
    // 2.13: "`message` — Empty `{}` when the type is unknown to the fixed list of nodes".
    const { data, id, received } = await incoming({ type: 'unsupported', unsupported: { type: 'poll_update' } });
    expect(data).toStrictEqual(closed(id, 'unsupported', {}));
    expect(received.media).toBeUndefined();
  });

  test('a payload for another phone_number_id yields no events', async () => {
    // Spec 5.6: "`metadata.phone_number_id` is cross-checked only when present".
    const answer = await sim.deliverIncoming(callbackUrl, { from: CONTACT, type: 'text', text: { body: 'not for you' }, phoneNumberId: '222222222222222' });
    expect(answer.status).toBe(200);
    expect(ingested).toEqual([false]);
    expect(events.messages).toEqual([]);
    expect(events.receipts).toEqual([]);
  });

  test('without metadata the payload is accepted for this connection', async () => {
    const { payload } = sim.incoming({ from: CONTACT, type: 'text', text: { body: 'no metadata' } });
    delete (payload.entry[0]!.changes[0]!.value as any).metadata;
    expect(await driver.callbacks!.ingest(connection, payload, events)).toBe(true);
    expect(events.messages.map((m) => m.text)).toEqual(['no metadata']);
  });

  test('other change fields pass nothing', async () => {
    const payload = {
      object: 'whatsapp_business_account',
      entry: [{ id: sim.businessAccountId, changes: [{ field: 'message_template_status_update', value: { event: 'APPROVED', message_template_id: 1, message_template_name: 'hello', message_template_language: 'en_US', reason: 'NONE' } }] }],
    };
    expect(await driver.callbacks!.ingest(connection, payload, events)).toBe(true);
    expect([events.messages, events.receipts, events.statuses, events.passthroughs]).toEqual([[], [], [], []]);
  });
});

describe('ingest: statuses become receipts', () => {
  test('sent, delivered, read and failed (with errors[0]) map to SENT, DELIVERED, READ, FAILED', async () => {
    // Spec 6.1: "`messages.update` — a delivery status changed (sent, delivered, read); failures appear in `statuses[].errors`".
    const { externalId } = await driver.send(connection, message({ kind: 'text', text: 'tracked' }));
    for (const status of ['sent', 'delivered', 'read']) await sim.deliverStatus(callbackUrl, { messageId: externalId, status });
    await sim.deliverStatus(callbackUrl, { messageId: 'wamid.OTHER', status: 'failed', recipientId: CONTACT, error: 131047 });
    expect(ingested).toEqual([true, true, true, true]);
    expect(events.receipts).toEqual([
      { externalId, remoteJid: `${CONTACT}@s.whatsapp.net`, status: 'SENT' },
      { externalId, remoteJid: `${CONTACT}@s.whatsapp.net`, status: 'DELIVERED' },
      { externalId, remoteJid: `${CONTACT}@s.whatsapp.net`, status: 'READ' },
      { externalId: 'wamid.OTHER', remoteJid: `${CONTACT}@s.whatsapp.net`, status: 'FAILED', error: { code: 131047, title: 'Re-engagement message' } },
    ]);
  });
});
