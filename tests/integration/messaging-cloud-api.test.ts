import { beforeAll, describe, expect, test } from 'bun:test';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { connectionEvents, useEventWatch } from '../support/connections.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { chatMessageWhen } from '../support/wait.ts';
import { workerSettled } from '../support/wait.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * The official (`cloud-api`) connection end to end: the service over HTTP, its driver calling
 * a local Graph API simulator, and the simulator posting signed callbacks back to
 * `/v3/webhooks/whatsapp/{connectionId}` (ARCHITECTURE.md, "Network drivers"; issue 3 items 3,
 * 5, 8; spec 3.4, 4.5, 5.6, 6.1).
 */

let connectionId: string;
let callbackUrl: string;

// The contacts' phones stay offline: after a send the platform posts `sent` only, so a send's
// status is SENT where these tests look, and `delivered`/`read` come when a test posts them.
const sim = useGraphSimulator({ displayPhoneNumber: '+1 555-010-4477', statusCallbacks: { upTo: 'sent' } });

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });
const eventWatch = useEventWatch(service);

beforeAll(async () => {
  const created = await service.call('POST', '/v3/connections', {
    apikey: owner.token,
    body: {
      name: 'official',
      driver: 'cloud-api',
      credentials: {
        phoneNumberId: sim.phoneNumberId,
        businessAccountId: sim.businessAccountId,
        accessToken: sim.accessToken,
        appSecret: sim.appSecret,
        verifyToken: sim.verifyToken,
      },
    },
  });
  expect(created.status).toBe(201);
  connectionId = created.body.id;
  // The tests read the connection's events: a webhook reads them, so they are logged.
  await eventWatch.watch(owner.token, connectionId);
  callbackUrl = `${service.url}/v3/webhooks/whatsapp/${connectionId}`;
  // The platform posts asynchronous statuses (the 131047 failure) to the registered callback URL.
  sim.callbackUrl = callbackUrl;
}, HOOK_TIMEOUT);

// ------------------------------------------------------------------------------------------

const send = (body: Record<string, unknown>) => service.call('POST', `/v3/connections/${connectionId}/chats/messages`, { apikey: owner.token, body });
const getMessage = (id: string) => service.call('GET', `/v3/connections/${connectionId}/chats/messages/${id}`, { apikey: owner.token });

const until = (id: string, done: (m: any) => boolean, timeoutMs = 20_000): Promise<any> => chatMessageWhen(service, owner.token, connectionId, id, done, { timeout: timeoutMs });
const settled = (id: string, timeoutMs?: number) => until(id, (m) => m.status !== 'PENDING', timeoutMs);

const events = (event: string): Promise<any[]> => connectionEvents(service, connectionId, event);

const storedByExternal = (externalId: string) =>
  service.runtime.ctx.db.selectFrom('messages').selectAll().where('connection_id', '=', connectionId).where('external_id', '=', externalId).execute();

const countMessages = async () =>
  Number(
    (await service.runtime.ctx.db.selectFrom('messages').select((eb) => eb.fn.countAll<string>().as('n')).where('connection_id', '=', connectionId).executeTakeFirstOrThrow()).n,
  );

let counter = 0;
const newContact = () => `4479${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++counter).padStart(2, '0')}`;

/** A contact writes to the business (opens the 24-hour window). */
async function contactWrites(from: string, text = 'hello', extra: Record<string, unknown> = {}) {
  const answer = await sim.deliverIncoming(callbackUrl, { from, name: 'Dana', type: 'text', text: { body: text }, ...extra });
  expect(answer.status).toBe(200);
  return answer;
}

/** Test-only time travel: moves the contact's last message `hours` into the past in the `chats` table. */
async function ageContactMessage(contact: string, hours: number) {
  await service.runtime.ctx.db
    .updateTable('chats')
    .set({ last_contact_message_at: new Date(Date.now() - hours * 3_600_000) })
    .where('connection_id', '=', connectionId)
    .where('remote_jid', '=', `${contact}@s.whatsapp.net`)
    .execute();
}

// ------------------------------------------------------------------------------------------

describe('connecting with the customer’s own credentials', () => {
  test('connect checks the credentials against the API: CONNECTED with the business number', async () => {
    const res = await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey: owner.token });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('CONNECTED');
    expect(res.body.phoneNumber).toBe('15550104477');
    // The URL to register with the platform: PUBLIC_URL + the callback path.
    expect(res.body.callbackUrl).toBe(`${service.runtime.ctx.config.publicUrl}/v3/webhooks/whatsapp/${connectionId}`);
    expect(sim.log).toContain(`GET /v23.0/${sim.phoneNumberId}`);
  });
});

describe('provider callbacks (spec 4.5, 5.6)', () => {
  test('GET handshake with the right verify token echoes the challenge; a wrong token is 403', async () => {
    // Spec 5.6: "network provider callbacks | GET: verify token".
    const ok = await sim.verifyCallback(callbackUrl);
    expect(ok.status).toBe(200);
    expect(ok.ok).toBe(true);
    const wrong = await sim.verifyCallback(callbackUrl, 'not-the-token');
    expect(wrong.status).toBe(403);
    expect(wrong.ok).toBe(false);
  });

  test('a POST with a bad (or no) signature is 401 and nothing is stored', async () => {
    // Issue 3 item 5: "A bad signature is 401 and nothing is stored"; spec 5.6: "POST: `x-hub-signature-256` when an app secret is configured".
    const before = await countMessages();
    const built = sim.incoming({ from: newContact(), type: 'text', text: { body: 'forged' } });
    const id = built.message.id as string;
    const badSignature = await fetch(callbackUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
      body: built.rawBody,
    });
    expect(badSignature.status).toBe(401);
    expectStandardError({ status: badSignature.status, body: await badSignature.json() }, 401, 'Unauthorized');
    // Signed for another body: the signature covers the raw bytes.
    const tampered = await fetch(callbackUrl, { method: 'POST', headers: built.headers, body: built.rawBody.replace('forged', 'FORGED') });
    expect(tampered.status).toBe(401);
    const unsigned = await fetch(callbackUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: built.rawBody });
    expect(unsigned.status).toBe(401);
    // Not even JSON: still the signature decides first (nothing about the body is looked at).
    const garbage = await fetch(callbackUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }, body: '{not json' });
    expect(garbage.status).toBe(401);
    expect(await countMessages()).toBe(before);
    expect((await events('messages.upsert')).some((e) => e.data.key.id === id)).toBe(false);
  });

  test('an incoming message is stored once and published once, even when delivered twice', async () => {
    // Spec 2.13: "`key.id` | Network message id. Deduplicate on it."
    const from = newContact();
    const built = sim.incoming({ from, name: 'Dana', type: 'text', text: { body: 'Hi business' }, timestamp: 1_760_000_000 });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(callbackUrl, { method: 'POST', headers: built.headers, body: built.rawBody });
      expect(res.status).toBe(200);
    }
    const id = built.message.id as string;
    const rows = await storedByExternal(id);
    expect(rows).toHaveLength(1);
    const published = (await events('messages.upsert')).filter((e) => e.data.key.id === id);
    expect(published).toHaveLength(1);
    // Spec 6.1: "Envelope: `{ event, connectionId, remoteJid, sender, data }`"; 2.13 closed shape.
    expect(published[0]).toEqual({
      event: 'messages.upsert',
      connectionId,
      remoteJid: `${from}@s.whatsapp.net`,
      sender: '15550104477',
      data: {
        key: { id, remoteJid: `${from}@s.whatsapp.net`, fromMe: false },
        pushName: 'Dana',
        status: 'DELIVERY_ACK',
        messageType: 'conversation',
        message: { conversation: 'Hi business' },
        messageTimestamp: 1_760_000_000,
        source: 'unknown',
        isAiMessage: false,
      },
    });
  });

  test('a callback for another phone_number_id stores nothing', async () => {
    // Spec 5.6: "`metadata.phone_number_id` is cross-checked only when present".
    const before = await countMessages();
    const answer = await sim.deliverIncoming(callbackUrl, { from: newContact(), type: 'text', text: { body: 'not for you' }, phoneNumberId: '999999999999999' });
    expect(answer.status).toBeLessThan(300);
    expect(await storedByExternal(answer.messageId)).toHaveLength(0);
    expect(await countMessages()).toBe(before);
  });

  test('callbacks for an unknown connection are 404', async () => {
    const res = await fetch(`${service.url}/v3/webhooks/whatsapp/${crypto.randomUUID()}?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`);
    expect(res.status).toBe(404);
  });

  test('incoming media gets a downloadMediaUrl that streams the provider’s bytes without an API key', async () => {
    // Spec 2.13: "on an official connection only when the provider returned a media id".
    const bytes = new Uint8Array([137, 80, 78, 71, 1, 2, 3, 4, 5]);
    const answer = await sim.deliverIncoming(callbackUrl, { from: newContact(), type: 'image', image: { bytes, mime_type: 'image/png', caption: 'receipt' } });
    const [row] = await storedByExternal(answer.messageId);
    const content = (typeof row!.content === 'string' ? JSON.parse(row!.content) : row!.content) as any;
    expect(content.messageType).toBe('imageMessage');
    expect(content.message.imageMessage).toMatchObject({ caption: 'receipt', mimetype: 'image/png' });
    const res = await fetch(content.message.imageMessage.downloadMediaUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });
});

describe('sending inside the window', () => {
  const contact = newContact();
  let incomingId = '';

  beforeAll(async () => {
    incomingId = (await contactWrites(contact, 'I need help')).messageId;
  }, HOOK_TIMEOUT);

  test('free text to a contact who wrote: SENT, and the Graph API received the documented body', async () => {
    const res = await send({ to: `+${contact}`, text: 'How can we help?' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('PENDING');
    const done = await settled(res.body.id);
    expect(done.status).toBe('SENT');
    const graph = sim.sent.find((m) => m.id === done.externalId);
    expect(graph).toBeDefined();
    expect(graph!.waId).toBe(contact);
    expect(graph!.body).toMatchObject({ messaging_product: 'whatsapp', to: contact, type: 'text', text: { body: 'How can we help?' } });
  });

  const kinds: Array<[string, Record<string, unknown>, string]> = [
    ['image', { image: { url: 'https://example.com/a.jpg', caption: 'A' } }, 'image'],
    ['video', { video: { url: 'https://example.com/a.mp4' } }, 'video'],
    ['audio', { audio: { url: 'https://example.com/a.ogg', voiceNote: true } }, 'audio'],
    ['document', { document: { url: 'https://example.com/a.pdf', fileName: 'a.pdf' } }, 'document'],
    ['sticker', { sticker: { url: 'https://example.com/a.webp' } }, 'sticker'],
    ['location', { location: { latitude: 51.5, longitude: -0.12, name: 'HQ' } }, 'location'],
    ['contacts', { contacts: [{ name: 'Eve Smith', phones: ['+447700900123'] }] }, 'contacts'],
    ['list', { list: { body: 'Choose', buttonText: 'Menu', sections: [{ title: 'A', rows: [{ id: 'r1', title: 'Row 1' }] }] } }, 'interactive'],
    ['buttons', { buttons: { body: 'OK?', buttons: [{ id: 'y', title: 'Yes' }] } }, 'interactive'],
  ];
  for (const [kind, content, graphType] of kinds) {
    test(`${kind} goes out as a Graph "${graphType}" message and ends SENT`, async () => {
      // Issue 3 Tests: "each message kind sent on the sandbox and on cloud-api (against the simulator)".
      const res = await send({ to: contact, ...content });
      expect(res.status).toBe(201);
      const done = await settled(res.body.id);
      expect(done.status).toBe('SENT');
      const graph = sim.sent.find((m) => m.id === done.externalId)!;
      expect(graph.body.type).toBe(graphType);
    });
  }

  test('reaction to the contact’s message names its network id', async () => {
    const res = await send({ to: contact, reaction: { messageId: incomingId, emoji: '🙏' } });
    expect(res.status).toBe(201);
    const done = await settled(res.body.id);
    expect(done.status).toBe('SENT');
    expect(sim.sent.find((m) => m.id === done.externalId)!.body).toMatchObject({ type: 'reaction', reaction: { message_id: incomingId, emoji: '🙏' } });
  });

  test('uploaded media (API-key upload, then send by mediaId) is uploaded to the Graph API and sent by id', async () => {
    const bytes = new Uint8Array([255, 216, 255, 224, 7, 7, 7]);
    const up = await fetch(`${service.url}/v3/connections/${connectionId}/media`, { method: 'POST', headers: { apikey: owner.token, 'content-type': 'image/jpeg' }, body: bytes });
    expect(up.status).toBe(201);
    const { mediaId } = (await up.json()) as { mediaId: string };
    const res = await send({ to: contact, image: { mediaId, caption: 'uploaded' } });
    expect(res.status).toBe(201);
    const done = await settled(res.body.id);
    expect(done.status).toBe('SENT');
    const graph = sim.sent.find((m) => m.id === done.externalId)!;
    expect(graph.body.image.id).toBeDefined();
    expect(sim.media.get(graph.body.image.id)!.bytes).toEqual(bytes);
  });

  test('status callbacks (delivered, read) update the message; a late delivered leaves READ', async () => {
    // Spec 6.1: "`messages.update` | a delivery status changed (sent, delivered, read)".
    const res = await send({ to: contact, text: 'tracking receipts' });
    const done = await settled(res.body.id);
    expect(done.status).toBe('SENT');
    await sim.settle(); // the platform's own `sent` first
    expect((await sim.deliverStatus(callbackUrl, { messageId: done.externalId, status: 'delivered' })).status).toBe(200);
    expect((await getMessage(res.body.id)).body.status).toBe('DELIVERED');
    expect((await sim.deliverStatus(callbackUrl, { messageId: done.externalId, status: 'read' })).status).toBe(200);
    expect((await getMessage(res.body.id)).body.status).toBe('READ');
    await sim.deliverStatus(callbackUrl, { messageId: done.externalId, status: 'delivered' });
    expect((await getMessage(res.body.id)).body.status).toBe('READ');
    // One shape for every network: `statuses[]` as the platform words it (spec 6.1).
    const updates = (await events('messages.update')).filter((e) => e.data.key?.id === done.externalId);
    expect(updates.map((e) => e.data.statuses[0].status)).toEqual(['sent', 'delivered', 'read', 'delivered']);
    expect(updates[0].data.statuses[0].recipient_id).toBe(contact);
  });

  test('a failed status with 131047 marks the message FAILED with that error code', async () => {
    // Spec 6.1: "failures appear in `statuses[].errors` (code `131047` means the 24-hour window is closed)".
    // The platform closed the window on its side: the send is accepted, then a failed status arrives.
    const other = newContact();
    await contactWrites(other);
    sim.closeWindowFor(other);
    const res = await send({ to: other, text: 'too late on the platform side' });
    expect(res.status).toBe(201);
    const failed = await until(res.body.id, (m) => m.status === 'FAILED');
    expect(failed.status).toBe('FAILED');
    expect(failed.error.code).toBe(131047);
    expect(typeof failed.error.title).toBe('string');
    sim.openWindowFor(other);
    const statuses = (await events('messages.update')).filter((e) => e.data.key?.id === failed.externalId);
    expect(statuses[0].data.statuses[0].errors[0].code).toBe(131047);
  });

  test('throttling (130429) is retried by the queue and the message still ends SENT', async () => {
    // Issue 3 item 3: "the driver send runs on the queue with retries"; item 8: "130429 for throttling".
    const sends = () => sim.log.filter((l) => l === `POST /v23.0/${sim.phoneNumberId}/messages`).length;
    const before = sends();
    sim.throttleNext(1);
    const res = await send({ to: contact, text: 'through the throttle' });
    expect(res.status).toBe(201);
    const done = await settled(res.body.id, 30_000);
    expect(done.status).toBe('SENT');
    expect(sends() - before).toBe(2);
    expect(sim.sent.filter((m) => m.body.text?.body === 'through the throttle')).toHaveLength(1);
  }, 60_000);
});

describe('the 24-hour send window (spec 3.4)', () => {
  test('free text to a contact who never wrote is 422 (standard shape: window expired, template required); nothing is sent', async () => {
    // Spec 7.2: "free text into a closed window | standard shape, message says the outbound window expired
    // and a pre-approved template is required | 422".
    const stranger = newContact();
    const sentBefore = sim.sent.length;
    const res = await send({ to: stranger, text: 'cold outreach' });
    expectStandardError(res, 422, 'Unprocessable Entity');
    expect(res.body.message).toMatch(/window expired/i);
    expect(res.body.message).toMatch(/template/i);
    // Media and other free-form kinds are refused the same way.
    expectStandardError(await send({ to: stranger, image: { url: 'https://example.com/a.jpg' } }), 422, 'Unprocessable Entity');
    await workerSettled(service);
    expect(sim.sent.length).toBe(sentBefore);
  });

  test('a template to that contact is accepted and goes out', async () => {
    // Spec 3.4: "only a pre-approved template may be sent".
    const stranger = newContact();
    const res = await send({ to: stranger, template: { name: 'order_update', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: '42' }] }] } });
    expect(res.status).toBe(201);
    const done = await settled(res.body.id);
    expect(done.status).toBe('SENT');
    expect(sim.sent.find((m) => m.id === done.externalId)!.body).toMatchObject({ type: 'template', template: { name: 'order_update', language: { code: 'en_US' } } });
    // And through the send-template route of spec 4.3.
    const viaRoute = await service.call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, {
      apikey: owner.token,
      body: { to: stranger, name: 'order_update', language: 'en_US' },
    });
    expect(viaRoute.status).toBe(201);
  });

  test('the window closes 24 h after the contact’s last message and reopens when the contact writes again', async () => {
    const contact = newContact();
    await contactWrites(contact);
    expect((await send({ to: contact, text: 'within the window' })).status).toBe(201);

    // Time travel (test only): the contact's last message is made 23 h old: still open.
    await ageContactMessage(contact, 23);
    expect((await send({ to: contact, text: 'still open at 23 h' })).status).toBe(201);

    // Time travel: 25 h old: "Window open | 24 h pass since contact's last message | Window closed".
    await ageContactMessage(contact, 25);
    const closed = await send({ to: contact, text: 'too late' });
    expectStandardError(closed, 422, 'Unprocessable Entity');
    expect(closed.body.message).toMatch(/window expired/i);
    expect((await send({ to: contact, template: { name: 'reengage', language: 'en_US' } })).status).toBe(201);

    // "Window closed | contact replies | Window open".
    await contactWrites(contact, 'back again');
    expect((await send({ to: contact, text: 'welcome back' })).status).toBe(201);
  });

  test('a contact message that arrives late with an old timestamp does not reopen the window', async () => {
    const contact = newContact();
    await contactWrites(contact, 'sent long ago', { timestamp: Math.floor(Date.now() / 1000) - 30 * 3600 });
    expectStandardError(await send({ to: contact, text: 'hello?' }), 422, 'Unprocessable Entity');
  });
});
