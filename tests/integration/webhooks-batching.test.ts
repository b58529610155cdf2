import { describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import type { SandboxDriver } from '../../adapters/drivers/sandbox/index.ts';
import { useTestService, useOwner } from '../support/service.ts';

import { useReceiver } from '../support/webhook-receiver.ts';
import { deliveriesSettled } from '../support/wait.ts';

/**
 * Batching windows against a real local HTTP receiver (issue 4 item 5; spec 2.8, 2.13, 6.3).
 *
 * Spec 6.3: "With `messageGroupDelay` set (1 to 300 seconds) a contact's messages are held for a
 * sliding window per contact and delivered as one request in which `data` is an array of the
 * same objects; handlers must accept both an object and an array. The window can mix photos and
 * text." Every scenario has its own connection and receiver path.
 */

const receiver = useReceiver();

const service = useTestService({ env: { PLAN_PRO_CONNECTIONS: '100' } });
const owner = useOwner(service, { plan: 'PRO' });

let counter = 0;
const newContact = () => `55219${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++counter).padStart(2, '0')}`;
const jid = (number: string) => `${number}@s.whatsapp.net`;
const PNG = (seed: number) => Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, seed, seed + 1]).toString('base64');
const T = Math.floor(Date.now() / 1000) - 60;

async function scenario(label: string, settings: Record<string, unknown>) {
  const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: `${label}-${++counter}` } });
  expect(created.status).toBe(201);
  const connected = await service.call('POST', `/v3/connections/${created.body.id}/connect`, { apikey: owner.token });
  expect(connected.body.status).toBe('CONNECTED');
  const path = `/batch/${label}-${++counter}`;
  const webhook = await service.call('POST', '/v3/webhooks', {
    apikey: owner.token,
    body: { url: receiver.url(path), events: ['messages.upsert'], connections: [created.body.id], ...settings },
  });
  expect(webhook.status).toBe(201);
  const secret = (await service.call('GET', `/v3/webhooks/${webhook.body.id}/secret`, { apikey: owner.token })).body.secret as string;
  return { connection: { id: created.body.id as string, phoneNumber: connected.body.phoneNumber as string }, path, webhookId: webhook.body.id as string, secret };
}

async function inject(connectionId: string, body: Record<string, unknown>) {
  const res = await service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, { apikey: owner.token, body });
  expect(res.status).toBe(201);
  return res.body;
}

const ALWAYS = ['isAiMessage', 'key', 'message', 'messageTimestamp', 'messageType', 'pushName', 'source', 'status'];

/** Spec 2.13: "Closed shape … Always-present keys"; conditional keys only when they apply. */
function expectClosedShape(data: any, conditional: string[] = []): void {
  // "in batched examples `contextInfo` may appear as null": tolerate that one extra key only.
  const keys = Object.keys(data).filter((k) => !(k === 'contextInfo' && data[k] === null));
  expect(keys.sort()).toEqual([...ALWAYS, ...conditional].sort());
  expect(data.key.fromMe).toBe(false);
  expect(data.status).toBe('DELIVERY_ACK');
  expect(Number.isInteger(data.messageTimestamp)).toBe(true);
}

/** Spec 6.3: "sort on `messageTimestamp`". */
function expectTimestampOrder(data: any[]): void {
  for (let i = 1; i < data.length; i++) expect(data[i].messageTimestamp).toBeGreaterThanOrEqual(data[i - 1].messageTimestamp);
}

const sandbox = () => service.runtime.ctx.drivers.get('sandbox') as SandboxDriver;

describe('messageGroupDelay (spec 6.3)', () => {
  test('text, a photo and text within the window arrive as ONE request; data is an array of three 2.13 objects in messageTimestamp order', async () => {
    const { connection, path, secret } = await scenario('mixed', { messageGroupDelay: 2, hmacEnabled: true });
    const contact = newContact();
    // Injected out of timestamp order: the delivered array must be sorted, not in arrival order.
    const late = await inject(connection.id, { from: contact, text: 'third by time', timestamp: T + 20 });
    const photo = await inject(connection.id, { from: contact, type: 'imageMessage', text: 'a caption', media: { base64: PNG(1), mimetype: 'image/png' }, timestamp: T });
    const middle = await inject(connection.id, { from: contact, text: 'second by time', timestamp: T + 10 });
    const lastInjectAt = Date.now();

    const [hit] = await receiver.waitFor(path, 1);
    await deliveriesSettled(service);
    expect(receiver.hits(path)).toHaveLength(1);
    // Held for the window: not before it closed.
    expect(hit!.at - lastInjectAt).toBeGreaterThanOrEqual(1_800);

    const envelope = hit!.json;
    expect(Object.keys(envelope).sort()).toEqual(['connectionId', 'data', 'event', 'remoteJid', 'sender']);
    expect(envelope).toMatchObject({ event: 'messages.upsert', connectionId: connection.id, remoteJid: jid(contact), sender: connection.phoneNumber });
    expect(Array.isArray(envelope.data)).toBe(true);
    expect(envelope.data).toHaveLength(3);
    expect(envelope.data.map((d: any) => d.key.id)).toEqual([photo.externalId, middle.externalId, late.externalId]);
    expect(envelope.data.map((d: any) => d.messageTimestamp)).toEqual([T, T + 10, T + 20]);
    for (const data of envelope.data) expectClosedShape(data);
    // "The same objects" as single deliveries carry: exactly what was stored for each message.
    expect(envelope.data).toEqual([photo.content, middle.content, late.content]);
    // Spec 2.13: "`imageMessage` (node `imageMessage` with `mimetype`, `downloadMediaUrl`)".
    const [image, second, third] = envelope.data;
    expect(image.messageType).toBe('imageMessage');
    expect(image.message.imageMessage.mimetype).toBe('image/png');
    expect(typeof image.message.imageMessage.downloadMediaUrl).toBe('string');
    expect(second.message).toEqual({ conversation: 'second by time' });
    expect(third.message).toEqual({ conversation: 'third by time' });
    // The batch is signed like any delivery, over its raw bytes.
    const ts = hit!.headers.get('x-switchboard-timestamp');
    expect(hit!.headers.get('x-switchboard-signature-256')).toBe('sha256=' + createHmac('sha256', secret).update(`${ts}.`).update(hit!.raw).digest('hex'));
  });

  test('the window slides: each message restarts it, so messages 1.5 s apart stay in one request past the first window', async () => {
    // Spec 6.3: "held for a sliding window per contact".
    const { connection, path, webhookId } = await scenario('sliding', { messageGroupDelay: 2 });
    const contact = newContact();
    const first = Date.now();
    await inject(connection.id, { from: contact, text: 'one' });
    // Sleeps: the sliding window is about time passing.
    await Bun.sleep(1_500 - (Date.now() - first));
    await inject(connection.id, { from: contact, text: 'two' });
    // At 3 s the first message's own 2 s window is long over; the slid window is still open.
    await Bun.sleep(3_000 - (Date.now() - first));
    expect(receiver.hits(path)).toHaveLength(0);
    await inject(connection.id, { from: contact, text: 'three' });
    const lastInjectAt = Date.now();

    const [hit] = await receiver.waitFor(path, 1);
    expect(hit!.at - lastInjectAt).toBeGreaterThanOrEqual(1_800);
    expect(hit!.at - lastInjectAt).toBeLessThan(4_000);
    await deliveriesSettled(service);
    expect(receiver.hits(path)).toHaveLength(1);
    expect(hit!.json.data.map((d: any) => d.message.conversation)).toEqual(['one', 'two', 'three']);
    expectTimestampOrder(hit!.json.data);

    const history = (await service.call('GET', `/v3/webhooks/${webhookId}/deliveries`, { apikey: owner.token })).body.data;
    expect(history).toHaveLength(1);
    expect(history[0].eventIds).toHaveLength(3);
  });

  test('messages of two contacts in the same window → two requests, one per contact', async () => {
    // Spec 6.3: "a sliding window per contact".
    const { connection, path } = await scenario('two-contacts', { messageGroupDelay: 2 });
    const alice = newContact();
    const bob = newContact();
    await inject(connection.id, { from: alice, text: 'alice 1', timestamp: T });
    await inject(connection.id, { from: bob, text: 'bob 1', timestamp: T });
    await inject(connection.id, { from: alice, text: 'alice 2', timestamp: T + 1 });
    await inject(connection.id, { from: bob, text: 'bob 2', timestamp: T + 1 });
    await inject(connection.id, { from: bob, text: 'bob 3', timestamp: T + 2 });
    const hits = await receiver.waitFor(path, 2);
    await deliveriesSettled(service);
    expect(receiver.hits(path)).toHaveLength(2);
    const byContact = Object.fromEntries(hits.map((h) => [h.json.remoteJid, h.json.data]));
    expect(Object.keys(byContact).sort()).toEqual([jid(alice), jid(bob)].sort());
    expect(byContact[jid(alice)].map((d: any) => d.message.conversation)).toEqual(['alice 1', 'alice 2']);
    expect(byContact[jid(bob)].map((d: any) => d.message.conversation)).toEqual(['bob 1', 'bob 2', 'bob 3']);
    for (const [remoteJid, data] of Object.entries(byContact)) for (const d of data as any[]) expect(d.key.remoteJid).toBe(remoteJid);
  });

  test('an album (several imageMessage with album {id, index}) arrives batched with the album fields present', async () => {
    // Spec 6.3: "Several photos sent together arrive as separate `messages.upsert` events … `album.id` is the
    // parent message id (the grouping key) and `album.index` the position"; 2.13: "`album` | the message is part of an album".
    const { connection, path } = await scenario('album', { messageGroupDelay: 2 });
    const contact = newContact();
    const parent = await inject(connection.id, { from: contact, type: 'albumMessage', node: { expectedImageCount: 3, expectedVideoCount: 0 }, timestamp: T });
    const photos = [];
    // Sent together: same second (ties are common), arriving out of index order.
    for (const index of [2, 0, 1]) {
      photos.push(await inject(connection.id, { from: contact, type: 'imageMessage', media: { base64: PNG(index), mimetype: 'image/jpeg' }, album: { id: parent.externalId, index }, timestamp: T + 1 }));
    }
    const [hit] = await receiver.waitFor(path, 1);
    await deliveriesSettled(service);
    expect(receiver.hits(path)).toHaveLength(1);
    const data: any[] = hit!.json.data;
    expect(data).toHaveLength(4);
    expectTimestampOrder(data);
    expect(data[0].messageType).toBe('albumMessage');
    expect(data[0].message).toEqual({ albumMessage: { expectedImageCount: 3, expectedVideoCount: 0 } });
    expectClosedShape(data[0]);
    const images = data.slice(1);
    for (const image of images) {
      expectClosedShape(image, ['album']);
      expect(image.messageType).toBe('imageMessage');
      expect(image.album.id).toBe(parent.externalId);
      expect(typeof image.message.imageMessage.downloadMediaUrl).toBe('string');
    }
    expect(images.map((i) => i.album.index).sort()).toEqual([0, 1, 2]);
    expect(images.map((i) => i.key.id).sort()).toEqual(photos.map((p) => p.externalId).sort());
    // Ties keep arrival order.
    expect(images.map((i) => i.album.index)).toEqual([2, 0, 1]);
  });

  test('without messageGroupDelay each message is its own request, data an object', async () => {
    // Spec 6.3: "handlers must accept both an object and an array": the object is the unbatched form.
    const { connection, path } = await scenario('unbatched', {});
    const contact = newContact();
    for (const text of ['a', 'b', 'c']) await inject(connection.id, { from: contact, text });
    // No window: three requests, none held back to be merged (the shape below proves it, not timing).
    const hits = await receiver.waitFor(path, 3);
    await deliveriesSettled(service);
    expect(receiver.hits(path)).toHaveLength(3);
    for (const hit of hits) {
      expect(Array.isArray(hit.json.data)).toBe(false);
      expectClosedShape(hit.json.data);
    }
    expect(hits.map((h) => h.json.data.message.conversation).sort()).toEqual(['a', 'b', 'c']);
  });

  test('a batch of one message still has data as an array', async () => {
    // Spec 6.3: "delivered as one request in which `data` is an array of the same objects".
    const { connection, path } = await scenario('single', { messageGroupDelay: 1 });
    await inject(connection.id, { from: newContact(), text: 'alone' });
    const [hit] = await receiver.waitFor(path, 1);
    expect(Array.isArray(hit!.json.data)).toBe(true);
    expect(hit!.json.data.map((d: any) => d.message.conversation)).toEqual(['alone']);
  });
});

describe('enableSimulateTyping (spec 2.8: "Shows typing to the contact during the batching window")', () => {
  test('the contact sees typing on when the window opens and off when it flushes', async () => {
    const { connection, path } = await scenario('typing', { messageGroupDelay: 2, enableSimulateTyping: true });
    const contact = newContact();
    const seen = () => sandbox().typingLog.filter((t) => t.connectionId === connection.id);
    const started = Date.now();
    await inject(connection.id, { from: contact, text: 'hi' });
    // On at the window's start, long before it closes.
    const deadline = Date.now() + 1_500;
    while (seen().length === 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(seen().map((t) => ({ to: t.to, typing: t.typing }))).toEqual([{ to: contact, typing: true }]);
    expect(seen()[0]!.at.getTime() - started).toBeLessThan(1_500);
    // More messages in the same window do not start it again.
    await inject(connection.id, { from: contact, text: 'are you there?' });
    // A sleep: the window is still open (the flush job waits for its end), so settling would close it.
    await Bun.sleep(300);
    expect(seen()).toHaveLength(1);

    const [hit] = await receiver.waitFor(path, 1);
    expect(hit!.json.data).toHaveLength(2);
    const offDeadline = Date.now() + 3_000;
    while (seen().length < 2 && Date.now() < offDeadline) await Bun.sleep(20);
    expect(seen().map((t) => ({ to: t.to, typing: t.typing }))).toEqual([
      { to: contact, typing: true },
      { to: contact, typing: false },
    ]);
    // Off when the window closed (the flush), not before.
    expect(seen()[1]!.at.getTime() - seen()[0]!.at.getTime()).toBeGreaterThanOrEqual(1_800);
    expect(Math.abs(seen()[1]!.at.getTime() - hit!.at)).toBeLessThan(1_500);
  });

  test('without enableSimulateTyping the contact sees no typing', async () => {
    // Spec 2.8: typing is shown only with "`enableSimulateTyping` | boolean".
    const { connection, path } = await scenario('no-typing', { messageGroupDelay: 1 });
    await inject(connection.id, { from: newContact(), text: 'quiet' });
    await receiver.waitFor(path, 1);
    await deliveriesSettled(service);
    expect(sandbox().typingLog.filter((t) => t.connectionId === connection.id)).toHaveLength(0);
  });
});
