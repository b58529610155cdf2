import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createOutbound, type Outbound } from '../../adapters/outbound/outbound.ts';
import { parseAllowList } from '../../core/shared/outbound-policy.ts';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AnyMessageContent, MiscMessageGenerationOptions, WAMessage } from 'baileys';
import { DriverError, type DriverConnection, type DriverEvents } from '../../core/connections/driver.ts';
import { toMessageData, type ReceivedMessage } from '../../core/messaging/incoming.ts';
import { hasAuthState, usePostgresAuthState } from '../../adapters/drivers/baileys/auth-state.ts';
import { backoffDelay, createBaileysDriver, receiptStatus, type BaileysDriver, type BaileysSocket, type BaileysSocketConfig } from '../../adapters/drivers/baileys/index.ts';
import { ManualTimers } from '../support/manual-timers.ts';
import { FakeClock, fixture, openBaileysTestDb, type BaileysTestDb } from '../fixtures/baileys/support.ts';

/**
 * The driver against a stand-in for the Baileys socket (the real network cannot be reached from
 * here): an event emitter with Baileys' event names, recording what the driver asks of it.
 */
class FakeSocket implements BaileysSocket {
  readonly ev = new EventEmitter();
  user: { id: string } | undefined;
  readonly sent: Array<{ jid: string; content: AnyMessageContent; options?: MiscMessageGenerationOptions }> = [];
  readonly presences: Array<[string, string | undefined]> = [];
  readonly pairingRequests: string[] = [];
  ended = 0;
  loggedOut = 0;
  private counter = 0;

  constructor(readonly config: BaileysSocketConfig) {}

  async sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage> {
    this.sent.push({ jid, content, ...(options && { options }) });
    this.counter += 1;
    return { key: { remoteJid: jid, fromMe: true, id: `3EB0${String(this.counter).padStart(18, '0')}` }, message: { conversation: 'x' }, messageTimestamp: 1735732800, status: 1 };
  }
  async sendPresenceUpdate(type: string, jid?: string) {
    this.presences.push([type, jid]);
  }
  /** As the network answers: a number starting 999 is not on it. */
  readonly lookups: string[] = [];
  async onWhatsApp(...jids: string[]) {
    this.lookups.push(...jids);
    return jids.map((jid) => ({ jid, exists: !jid.startsWith('999') }));
  }
  async requestPairingCode(phone: string) {
    this.pairingRequests.push(phone);
    return 'K7QW2PLX';
  }
  async logout() {
    this.loggedOut += 1;
    this.emitClose(401, 'Intentional Logout');
  }
  end() {
    this.ended += 1;
  }

  emit(event: string, data: unknown) {
    this.ev.emit(event, data);
  }
  qr(text: string) {
    this.emit('connection.update', { qr: text });
  }
  open(userId = '5511912345678:12@s.whatsapp.net') {
    this.user = { id: userId };
    this.emit('connection.update', { connection: 'open' });
  }
  emitClose(statusCode: number, message = 'Connection Closed') {
    // The shape of a Boom error: what Baileys puts in lastDisconnect.error.
    const error = Object.assign(new Error(message), { isBoom: true, output: { statusCode, payload: { statusCode, message } } });
    this.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }
}

/** The driver's timers: its reconnects, and the lease keeper's renewals (every ttl/3 = 10 000 ms). */
class DriverTimers extends ManualTimers {
  /** Delays of the pending reconnects (the keeper's renewals are every ttl/3 = 10 000 ms). */
  reconnectDelays() {
    return [...this.pending.values()].filter((p) => p.ms !== 10_000).map((p) => p.ms);
  }
  runReconnects() {
    for (const [handle, p] of [...this.pending]) {
      if (p.ms === 10_000) continue;
      this.pending.delete(handle);
      p.callback();
    }
  }
}

class RecordedEvents implements DriverEvents {
  statuses: Array<Parameters<DriverEvents['status']>[0]> = [];
  messages: ReceivedMessage[] = [];
  receipts: Array<Parameters<DriverEvents['receipt']>[0]> = [];
  passthroughs: Array<[string, string, unknown]> = [];
  async status(update: Parameters<DriverEvents['status']>[0]) {
    this.statuses.push(update);
  }
  async message(message: ReceivedMessage) {
    this.messages.push(message);
  }
  async receipt(update: Parameters<DriverEvents['receipt']>[0]) {
    this.receipts.push(update);
  }
  async passthrough(event: 'presence.update' | 'messages.edited' | 'messages.delete', remoteJid: string, data: unknown) {
    this.passthroughs.push([event, remoteJid, data]);
  }
}

interface Harness {
  driver: BaileysDriver;
  sockets: FakeSocket[];
  timers: DriverTimers;
  clock: FakeClock;
  errors: unknown[];
  downloads: WAMessage[];
  socket(): FakeSocket;
}

let t: BaileysTestDb;
beforeAll(async () => {
  t = await openBaileysTestDb();
}, 60_000); // migrations on a busy machine can take longer than the 5 s default
afterAll(async () => {
  await t.close();
});

function harness(owner: string, clock = new FakeClock(), outbound?: Outbound, maxMediaBytes?: number): Harness {
  const sockets: FakeSocket[] = [];
  const timers = new DriverTimers();
  const errors: unknown[] = [];
  const downloads: WAMessage[] = [];
  const driver = createBaileysDriver({
    db: t.db,
    owner,
    clock,
    timers,
    random: () => 0.5,
    socketFactory: (config) => {
      const socket = new FakeSocket(config);
      sockets.push(socket);
      return socket;
    },
    download: (async (message: WAMessage) => {
      downloads.push(message);
      return Buffer.from('JPEG bytes');
    }) as any,
    onError: (error) => void errors.push(error),
    ...(outbound && { outbound }),
    ...(maxMediaBytes !== undefined && { maxMediaBytes }),
  });
  return { driver, sockets, timers, clock, errors, downloads, socket: () => sockets[sockets.length - 1]! };
}

async function newConnection(): Promise<DriverConnection> {
  return { id: await t.newConnection(), workspaceId: crypto.randomUUID(), credentials: {}, phoneNumber: null };
}

/** A new connection, connected through `h`'s driver, with its events recorded. */
async function connectedSession(h: Harness, options?: { pairingPhoneNumber?: string }): Promise<{ connection: DriverConnection; events: RecordedEvents }> {
  const connection = await newConnection();
  const events = new RecordedEvents();
  await h.driver.connect(connection, events, options);
  return { connection, events };
}

/** Waits for the driver's event queue: retries the assertion until it holds (or 2 s). */
async function eventually(check: () => void): Promise<void> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await Bun.sleep(2);
    }
  }
}

describe('Baileys driver on a fake socket', () => {
  test('capabilities of an unofficial network', () => {
    const { driver } = harness('w');
    expect(driver.name).toBe('baileys');
    expect(driver.capabilities).toEqual({ official: false, sendWindow: false, templates: false, carousels: false, flows: false, typing: true, pairing: 'qr' });
  });

  test('connect opens a socket on the stored auth state; a QR becomes a qr status with its text', async () => {
    const h = harness('worker-qr');
    const { connection, events } = await connectedSession(h);
    expect(h.sockets).toHaveLength(1);
    expect(h.socket().config.connectionId).toBe(connection.id);
    expect(h.socket().config.auth.creds.registered).toBe(false);
    expect((await h.driver.leases.holder(connection.id))!.owner).toBe('worker-qr');

    h.socket().qr('2@k3Yq0Hk1Zc9v,8Xo1kX2c3,Vb4n5M6,a1B2c3D4');
    h.socket().qr('2@second-ref,8Xo1kX2c3,Vb4n5M6,a1B2c3D4');
    await eventually(() => expect(events.statuses).toHaveLength(2));
    expect(events.statuses).toEqual([
      { event: 'qr', qr: '2@k3Yq0Hk1Zc9v,8Xo1kX2c3,Vb4n5M6,a1B2c3D4' },
      { event: 'qr', qr: '2@second-ref,8Xo1kX2c3,Vb4n5M6,a1B2c3D4' },
    ]);
    // Connecting again while it runs changes nothing (no second socket).
    await h.driver.connect(connection, events);
    expect(h.sockets).toHaveLength(1);
    await h.driver.shutdown();
  });

  test('pairing by phone number: one pairing code per socket instead of the QR', async () => {
    const h = harness('worker-pair');
    const { connection, events } = await connectedSession(h, { pairingPhoneNumber: '+55 (11) 91234-5678' });
    h.socket().qr('2@ref1');
    h.socket().qr('2@ref2');
    await eventually(() => expect(events.statuses).toEqual([{ event: 'qr', pairingCode: 'K7QW2PLX' }]));
    expect(h.socket().pairingRequests).toEqual(['5511912345678']);
    await h.driver.shutdown();
  });

  test('open reports the number; credentials updates are stored', async () => {
    const h = harness('worker-open');
    const { connection, events } = await connectedSession(h);
    const socket = h.socket();
    Object.assign(socket.config.auth.creds, { registered: true, me: { id: '5511912345678:12@s.whatsapp.net' } });
    socket.emit('creds.update', { registered: true });
    socket.open();
    await eventually(() => expect(events.statuses).toEqual([{ event: 'opened', phoneNumber: '5511912345678' }]));
    expect(await hasAuthState(t.db, connection.id)).toBe(true);
    expect((await usePostgresAuthState(t.db, connection.id)).state.creds.me!.id).toBe('5511912345678:12@s.whatsapp.net');
    await h.driver.shutdown();
  });

  test('a logout by the phone: loggedOut, auth cleared, lease released, no reconnect', async () => {
    const h = harness('worker-logout');
    const { connection, events } = await connectedSession(h);
    h.socket().emit('creds.update', {});
    h.socket().open();
    await eventually(() => expect(events.statuses).toHaveLength(1));
    expect(await hasAuthState(t.db, connection.id)).toBe(true);

    h.socket().emitClose(401, 'Connection Failure');
    await eventually(() => expect(events.statuses).toHaveLength(2));
    expect(events.statuses[1]).toEqual({ event: 'loggedOut', reason: 'loggedOut: Connection Failure' });
    expect(await hasAuthState(t.db, connection.id)).toBe(false);
    expect(await h.driver.leases.holder(connection.id)).toBeUndefined();
    expect(h.timers.reconnectDelays()).toEqual([]);
    expect(h.timers.pending.size).toBe(0); // no keeper either
    expect(h.sockets).toHaveLength(1);
    expect(h.driver.runningSessions()).toEqual([]);
    await expect(h.driver.send(connection, { to: '5511987654321', content: { kind: 'text', text: 'oi' } })).rejects.toMatchObject({ retryable: true, code: 'not_connected' });
  });

  test('a transient drop: dropped, then reconnects with exponential backoff; open resets it', async () => {
    const h = harness('worker-drop');
    const { connection, events } = await connectedSession(h);
    h.socket().emit('creds.update', { nextPreKeyId: 31 });
    h.socket().open();

    const delays: number[] = [];
    for (const code of [428, 408, 503, 500, 408, 428, 428, 428]) {
      const before = h.sockets.length;
      h.socket().emitClose(code);
      await eventually(() => expect(h.timers.reconnectDelays()).toHaveLength(1));
      delays.push(h.timers.reconnectDelays()[0]!);
      h.timers.runReconnects();
      await eventually(() => expect(h.sockets).toHaveLength(before + 1));
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    expect(events.statuses.filter((s) => s.event === 'dropped')).toHaveLength(8);
    expect(events.statuses[1]).toEqual({ event: 'dropped', reason: 'connectionClosed: Connection Closed' });
    expect(h.sockets.slice(0, -1).every((s) => s.ended === 0)).toBe(true); // closed by the network, not by us

    h.socket().open();
    h.socket().emitClose(428);
    await eventually(() => expect(h.timers.reconnectDelays()).toEqual([1_000]));
    h.timers.runReconnects();
    await eventually(() => expect(h.sockets).toHaveLength(10));

    // A freshly built socket loads what the old one saved.
    expect(h.socket().config.auth.creds.advSecretKey).toBe(h.sockets[0]!.config.auth.creds.advSecretKey);
    await h.driver.shutdown();
  });

  test('restart required (after a QR scan) reconnects at once; events of a replaced socket are ignored', async () => {
    const h = harness('worker-restart');
    const { connection, events } = await connectedSession(h);
    const first = h.socket();
    first.qr('2@ref');
    first.emitClose(515, 'Stream Errored (restart required)');
    await eventually(() => expect(h.timers.reconnectDelays()).toEqual([0]));
    h.timers.runReconnects();
    await eventually(() => expect(h.sockets).toHaveLength(2));
    first.open(); // late event from the old socket
    h.socket().open();
    await eventually(() => expect(events.statuses.map((s) => s.event)).toEqual(['qr', 'dropped', 'opened']));
    await h.driver.shutdown();
  });

  test('backoff stays within 60 s whatever the jitter', () => {
    for (const r of [0, 0.25, 0.5, 0.999]) {
      expect(backoffDelay(0, () => r)).toBeGreaterThanOrEqual(800);
      expect(backoffDelay(0, () => r)).toBeLessThanOrEqual(1_200);
      expect(backoffDelay(30, () => r)).toBeLessThanOrEqual(60_000);
      expect(backoffDelay(30, () => r)).toBeGreaterThanOrEqual(48_000);
    }
  });

  test('messages.upsert → events.message in the 2.13 shape; raw kept for media, replies and retries', async () => {
    const h = harness('worker-upsert');
    const { connection, events } = await connectedSession(h);
    h.socket().open();
    const image = fixture('image');
    const text = fixture('extended-text-reply');
    h.socket().emit('messages.upsert', { type: 'notify', messages: [image.message, fixture('skip-revoke').message, text.message] });
    h.socket().emit('messages.upsert', { type: 'append', messages: [fixture('from-me-web').message] });
    await eventually(() => expect(events.messages).toHaveLength(3));

    expect(toMessageData(events.messages[0]!, { downloadMediaUrl: image.downloadMediaUrl! }) as unknown).toEqual(image.expected!);
    expect(toMessageData(events.messages[1]!) as unknown).toEqual(text.expected!);
    expect(events.messages[2]!.fromMe).toBe(true);

    // fetchMedia works from the stored raw message, Buffers intact.
    const media = await h.driver.fetchMedia(connection, image.message.key.id!);
    expect(Buffer.from(media.bytes).toString()).toBe('JPEG bytes');
    expect(media.mimetype).toBe('image/jpeg');
    const downloaded = h.downloads[0]!.message!.imageMessage!;
    expect(Buffer.isBuffer(downloaded.mediaKey)).toBe(true);
    expect(Buffer.from(downloaded.mediaKey!).equals(Buffer.from(image.message.message!.imageMessage!.mediaKey!))).toBe(true);
    await expect(h.driver.fetchMedia(connection, text.message.key.id!)).rejects.toMatchObject({ code: 'media_gone', retryable: false });
    await expect(h.driver.fetchMedia(connection, 'NOPE')).rejects.toBeInstanceOf(DriverError);

    // Retry requests are answered from the store.
    expect(await h.socket().config.getMessage(text.message.key)).toEqual(text.message.message as any);
    await h.driver.shutdown();

    // After a restart (a new driver, no live session), media is still there.
    const later = harness('worker-upsert-2');
    expect(Buffer.from((await later.driver.fetchMedia(connection, image.message.key.id!)).bytes).toString()).toBe('JPEG bytes');
  });

  test('album items without a position are numbered in arrival order', async () => {
    const h = harness('worker-album');
    const { connection, events } = await connectedSession(h);
    const child = fixture('album-item-child-wrapper').message;
    const second = structuredClone(child);
    second.key.id = '3A5F3E2D1C0B9A0000FF';
    h.socket().emit('messages.upsert', { type: 'notify', messages: [fixture('album').message, child, second, fixture('album-item-indexed').message] });
    await eventually(() => expect(events.messages).toHaveLength(4));
    expect(events.messages.map((m) => m.album)).toEqual([undefined, { id: fixture('album').message.key.id!, index: 0 }, { id: fixture('album').message.key.id!, index: 1 }, { id: fixture('album').message.key.id!, index: 2 }]);
    await h.driver.shutdown();
  });

  test('messages.update: receipts, edits and deletes; presence passes through', async () => {
    const h = harness('worker-update');
    const { connection, events } = await connectedSession(h);
    const jid = '5511987654321@s.whatsapp.net';
    const ours = { remoteJid: jid, fromMe: true, id: '3EB0000000000000000001' };
    h.socket().emit('messages.update', [
      { key: ours, update: { status: 2 } },
      { key: ours, update: { status: 3, messageTimestamp: 1735732801 } },
      { key: { ...ours, remoteJid: '218741234567890@lid', remoteJidAlt: jid }, update: { status: 4 } },
      { key: ours, update: { status: 0 } },
      { key: ours, update: { status: 1 } }, // PENDING is not a receipt
      { key: { remoteJid: jid, fromMe: false, id: 'A1' }, update: { status: 4 } }, // our own read of their message
      { key: { remoteJid: jid, fromMe: false, id: 'A2' }, update: { message: { editedMessage: { message: { conversation: 'corrigido' } } }, messageTimestamp: 1735732805 } },
      { key: { remoteJid: jid, fromMe: false, id: 'A3' }, update: { message: null, messageStubType: 1, key: { remoteJid: jid, fromMe: false, id: 'B9' } } },
    ]);
    h.socket().emit('presence.update', { id: jid, presences: { [jid]: { lastKnownPresence: 'composing' } } });
    await eventually(() => expect(events.passthroughs).toHaveLength(3));

    expect(events.receipts.map((r) => [r.externalId, r.remoteJid, r.status])).toEqual([
      [ours.id, jid, 'SENT'],
      [ours.id, jid, 'DELIVERED'],
      [ours.id, jid, 'READ'],
      [ours.id, jid, 'FAILED'],
    ]);
    expect(events.receipts[3]!.error).toEqual({ code: 'ERROR', title: 'The network reported the message as failed' });
    expect(events.passthroughs).toEqual([
      ['messages.edited', jid, { key: { remoteJid: jid, fromMe: false, id: 'A2' }, update: { message: { editedMessage: { message: { conversation: 'corrigido' } } }, messageTimestamp: 1735732805 } }],
      ['messages.delete', jid, { key: { remoteJid: jid, fromMe: false, id: 'A3' }, update: { message: null, messageStubType: 1, key: { remoteJid: jid, fromMe: false, id: 'B9' } } }],
      ['presence.update', jid, { id: jid, presences: { [jid]: { lastKnownPresence: 'composing' } } }],
    ]);
    expect([0, 1, 2, 3, 4, 5, undefined].map((s) => receiptStatus(s))).toEqual(['FAILED', undefined, 'SENT', 'DELIVERED', 'READ', 'READ', undefined]);
    await h.driver.shutdown();
  });

  test('send uses the live socket: text, a quoted reply, a reaction to a stored message, typing', async () => {
    const h = harness('worker-send');
    const { connection, events } = await connectedSession(h);
    await expect(h.driver.send(connection, { to: '5511987654321', content: { kind: 'text', text: 'cedo demais' } })).rejects.toMatchObject({ code: 'not_connected', retryable: true });
    h.socket().open();
    const stored = fixture('lid-chat').message;
    h.socket().emit('messages.upsert', { type: 'notify', messages: [stored] });
    await eventually(() => expect(events.messages).toHaveLength(1));

    const result = await h.driver.send(connection, { to: '5511987654321', content: { kind: 'text', text: 'Olá!' } });
    expect(result.externalId).toBe('3EB0000000000000000001');
    const reply = await h.driver.send(connection, { to: '5511987654321', content: { kind: 'text', text: 'Respondendo' }, replyToExternalId: stored.key.id! });
    await h.driver.send(connection, { to: '5511987654321', content: { kind: 'reaction', reaction: { messageId: stored.key.id!, emoji: '🙏' } } });
    await h.driver.send(connection, { to: '5511987654321', content: { kind: 'image', image: { mediaId: 'm1', caption: 'Foto' } } }, { bytes: new Uint8Array([1, 2, 3]), mimetype: 'image/png' });
    await h.driver.sendTyping!(connection, '5511987654321', true);
    await h.driver.sendTyping!(connection, '5511987654321', false);

    const sent = h.socket().sent;
    expect(sent[0]).toEqual({ jid: '5511987654321@s.whatsapp.net', content: { text: 'Olá!' } });
    expect(sent[1]!.options!.quoted).toEqual(stored);
    expect(sent[2]!.content).toEqual({ react: { text: '🙏', key: { remoteJid: '218741234567890@lid', id: stored.key.id!, fromMe: false } } });
    expect((sent[3]!.content as any).caption).toBe('Foto');
    expect(h.socket().presences).toEqual([
      ['composing', '5511987654321@s.whatsapp.net'],
      ['paused', '5511987654321@s.whatsapp.net'],
    ]);
    // What we sent is stored too (a later reply can quote it).
    expect((await h.driver.messages.get(connection.id, reply.externalId))?.key.fromMe).toBe(true);
    await expect(h.driver.send(connection, { to: '5511987654321', content: { kind: 'template', template: { name: 't', language: 'pt_BR' } } })).rejects.toMatchObject({ retryable: false });
    await h.driver.shutdown();
  });

  test('a media url send is downloaded here through the outbound policy (issue 19), never by the library; a refused address fails for good and nothing is sent', async () => {
    const media = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(new Uint8Array([9, 9, 9]), { headers: { 'content-type': 'image/png' } }) });
    const internalHits: Request[] = [];
    const internal = Bun.serve({ hostname: '127.0.0.2', port: 0, fetch: (request) => (internalHits.push(request), new Response('secret')) });
    try {
      // 127.0.0.1 is exempted (the media server); 127.0.0.2 stands for an internal service.
      const h = harness('worker-media-url', new FakeClock(), createOutbound(parseAllowList('127.0.0.1').allow));
      const { connection, events } = await connectedSession(h);
      h.socket().open();
      await eventually(() => expect(events.statuses.some((e: any) => e.event === 'opened')).toBe(true));
      const send = (url: string) => h.driver.send(connection, { to: '5511987654321', content: { kind: 'image', image: { url } } }, { url, mimetype: 'image/png' });
      await send(`http://127.0.0.1:${media.port}/a.png`);
      expect([...((h.socket().sent[0]!.content as any).image as Uint8Array)]).toEqual([9, 9, 9]);
      await expect(send(`http://127.0.0.2:${internal.port}/admin`)).rejects.toMatchObject({ code: 'media_url_refused', retryable: false });
      expect(h.socket().sent).toHaveLength(1);
      expect(internalHits).toHaveLength(0);
      await h.driver.shutdown();
    } finally {
      media.stop(true);
      internal.stop(true);
    }
  });

  test('a media url send reads no more than the kind\'s limit (issue 19 §2: image 5 MB, sticker 100 KB static / 500 KB animated, MAX_MEDIA_BYTES lowering them): at the limit it is sent, one byte over it fails for good naming the kind and limit', async () => {
    const KB = 1024;
    const MB = 1024 * KB;
    const webp = (size: number, animated: boolean) => {
      const bytes = new Uint8Array(size).fill(7);
      bytes.set(new TextEncoder().encode('RIFF'), 0);
      bytes.set(new TextEncoder().encode('WEBPVP8X'), 8);
      bytes[20] = animated ? 0x02 : 0;
      return bytes;
    };
    // Bodies without Content-Length, in 64 KB chunks produced only as the driver reads them (and
    // as the sockets between take them: the most the kernel buffers on a loopback connection,
    // receive and send side, plus a megabyte of the client's and server's own, may be produced
    // beyond what the driver read; 16 MB in all with Linux's default buffers).
    let served = 0;
    const buffered = socketBufferLimit('tcp_rmem') + socketBufferLimit('tcp_wmem') + MB;
    const endless = Math.max(64 * MB, 2 * (5 * MB + buffered));
    const stream = (bytes: Uint8Array) =>
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (served >= bytes.length) return controller.close();
          const chunk = bytes.subarray(served, served + 64 * KB);
          served += chunk.length;
          controller.enqueue(chunk);
        },
      });
    const bodies: Record<string, () => Uint8Array> = {
      '/image-at': () => new Uint8Array(5 * MB).fill(1),
      '/image-over': () => new Uint8Array(5 * MB + 1),
      '/image-endless': () => new Uint8Array(endless),
      '/sticker-static-at': () => webp(100 * KB, false),
      '/sticker-static-over': () => webp(100 * KB + 1, false),
      '/sticker-animated-at': () => webp(500 * KB, true),
      '/sticker-animated-over': () => webp(500 * KB + 1, true),
    };
    const media = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => ((served = 0), new Response(stream(bodies[new URL(request.url).pathname]!()))) });
    try {
      const connect = async (h: Harness) => {
        const { connection, events } = await connectedSession(h);
        h.socket().open();
        await eventually(() => expect(events.statuses.some((e: any) => e.event === 'opened')).toBe(true));
        return connection;
      };
      const h = harness('worker-media-limits', new FakeClock(), createOutbound(parseAllowList('127.0.0.1').allow));
      const connection = await connect(h);
      const send = (kind: 'image' | 'sticker', path: string, driver = h.driver, on = connection) => {
        const url = `http://127.0.0.1:${media.port}${path}`;
        return driver.send(on, { to: '5511987654321', content: { kind, [kind]: { url } } as any }, { url, mimetype: kind === 'image' ? 'image/png' : 'image/webp' });
      };
      await send('image', '/image-at');
      expect(((h.socket().sent[0]!.content as any).image as Uint8Array).length).toBe(5 * MB);
      await expect(send('image', '/image-over')).rejects.toMatchObject({ code: 'media_too_large', retryable: false, message: expect.stringContaining('image larger than 5 MB (5242880 bytes)') });
      await expect(send('image', '/image-endless')).rejects.toMatchObject({ code: 'media_too_large' });
      // Stopped at the limit: the endless body was not read to its end (what sockets buffer aside).
      expect(served).toBeLessThan(5 * MB + buffered);
      await send('sticker', '/sticker-static-at');
      await send('sticker', '/sticker-animated-at');
      await expect(send('sticker', '/sticker-static-over')).rejects.toMatchObject({ code: 'media_too_large', message: expect.stringContaining('static sticker larger than 100 KB') });
      await expect(send('sticker', '/sticker-animated-over')).rejects.toMatchObject({ code: 'media_too_large', message: expect.stringContaining('sticker larger than 500 KB') });
      expect(h.socket().sent).toHaveLength(3);
      await h.driver.shutdown();

      // MAX_MEDIA_BYTES lower than the kind's limit bounds the read too.
      const capped = harness('worker-media-cap', new FakeClock(), createOutbound(parseAllowList('127.0.0.1').allow), 2 * MB);
      const onCapped = await connect(capped);
      await expect(send('image', '/image-at', capped.driver, onCapped)).rejects.toMatchObject({ code: 'media_too_large', message: expect.stringContaining('image larger than 2 MB') });
      await capped.driver.shutdown();
    } finally {
      media.stop(true);
    }
  }, 60_000);

  test('lookupNumber asks the live session (onWhatsApp); elsewhere it is refused as retryable', async () => {
    const clock = new FakeClock();
    const h = harness('worker-lookup', clock);
    const other = harness('worker-lookup-2', clock);
    const connection = await newConnection();
    await expect(h.driver.lookupNumber!(connection, '5511987654321')).rejects.toMatchObject({ code: 'not_connected', retryable: true });
    const events = new RecordedEvents();
    await h.driver.connect(connection, events);
    h.socket().open();
    await eventually(() => expect(events.statuses.some((s) => s.event === 'opened')).toBe(true));
    expect(await h.driver.lookupNumber!(connection, '5511987654321')).toEqual({ exists: true, jid: '5511987654321@s.whatsapp.net' });
    expect(await h.driver.lookupNumber!(connection, '9990001112')).toEqual({ exists: false, jid: null });
    expect(h.socket().lookups).toEqual(['5511987654321@s.whatsapp.net', '9990001112@s.whatsapp.net']);
    await expect(other.driver.lookupNumber!(connection, '5511987654321')).rejects.toMatchObject({ code: 'session_elsewhere', retryable: true });
    await h.driver.shutdown();
  });

  test('send failures: connection trouble is retryable, a refusal is not', async () => {
    const h = harness('worker-send-fail');
    const connection = await newConnection();
    await h.driver.connect(connection, new RecordedEvents());
    h.socket().open();
    await eventually(() => expect(h.socket().user).toBeDefined());
    await Bun.sleep(5);
    const boom = (statusCode: number, message: string) => Object.assign(new Error(message), { output: { statusCode } });
    h.socket().sendMessage = async () => {
      throw boom(428, 'Connection Closed');
    };
    await expect(h.driver.send(connection, { to: '5511987654321', content: { kind: 'text', text: 'x' } })).rejects.toMatchObject({ retryable: true, code: 428 });
    h.socket().sendMessage = async () => {
      throw boom(400, 'Invalid media type');
    };
    await expect(h.driver.send(connection, { to: '5511987654321', content: { kind: 'text', text: 'x' } })).rejects.toMatchObject({ retryable: false, code: 400 });
    await h.driver.shutdown();
  });

  test('one worker per session: a second worker stays idle, takes over when the first dies; the first then closes its socket', async () => {
    const clock = new FakeClock();
    const a = harness('worker-a', clock);
    const b = harness('worker-b', clock);
    const connection = await newConnection();
    const eventsA = new RecordedEvents();
    const eventsB = new RecordedEvents();
    await a.driver.connect(connection, eventsA);
    await b.driver.connect(connection, eventsB);
    expect(a.sockets).toHaveLength(1);
    expect(b.sockets).toHaveLength(0);
    expect(b.driver.runningSessions()).toEqual([]);

    // worker-a stops renewing (it hangs); after the TTL worker-b takes the session over.
    clock.advance(30_001);
    await b.driver.connect(connection, eventsB);
    expect(b.sockets).toHaveLength(1);
    expect((await b.driver.leases.holder(connection.id))!.owner).toBe('worker-b');

    // worker-a wakes up: its keeper finds the lease gone and closes its socket, saying nothing.
    await renewNow(a);
    await eventually(() => expect(a.sockets[0]!.ended).toBe(1));
    expect(a.driver.runningSessions()).toEqual([]);
    expect(eventsA.statuses).toEqual([]);
    // Its late socket events are ignored; a reconnect it had pending does not run.
    a.sockets[0]!.open();
    await Bun.sleep(10);
    expect(eventsA.statuses).toEqual([]);
    await b.driver.shutdown();
  });

  test('sends for a session another worker runs are refused here as retryable, naming the owner', async () => {
    const clock = new FakeClock();
    const a = harness('worker-e', clock);
    const b = harness('worker-f', clock);
    const connection = await newConnection();
    await a.driver.connect(connection, new RecordedEvents());
    a.socket().open();
    expect(await b.driver.ownerOf(connection.id)).toBe('worker-e');
    await expect(b.driver.send(connection, { to: '5511987654321', content: { kind: 'text', text: 'x' } })).rejects.toMatchObject({ code: 'session_elsewhere', retryable: true });
    clock.advance(30_001); // worker-e died: nobody runs it
    expect(await b.driver.ownerOf(connection.id)).toBeUndefined();
    await expect(b.driver.send(connection, { to: '5511987654321', content: { kind: 'text', text: 'x' } })).rejects.toMatchObject({ code: 'not_connected', retryable: true });
  });

  test('a pairing code asked on another worker moves an unpaired session there; a paired one stays', async () => {
    const clock = new FakeClock();
    const a = harness('worker-g', clock);
    const b = harness('worker-h', clock);
    const unpaired = await newConnection();
    const eventsB = new RecordedEvents();
    await a.driver.connect(unpaired, new RecordedEvents());
    a.socket().qr('2@ref');
    await b.driver.connect(unpaired, eventsB, { pairingPhoneNumber: '5511912345678' });
    expect(b.sockets).toHaveLength(1);
    expect((await b.driver.leases.holder(unpaired.id))!.owner).toBe('worker-h');
    b.socket().qr('2@ref-b');
    await eventually(() => expect(eventsB.statuses).toEqual([{ event: 'qr', pairingCode: 'K7QW2PLX' }]));
    await renewNow(a);
    await eventually(() => expect(a.sockets[0]!.ended).toBe(1));
    expect(a.sockets[0]!.loggedOut).toBe(0);

    const paired = await newConnection();
    const eventsPaired = new RecordedEvents();
    await a.driver.connect(paired, eventsPaired);
    Object.assign(a.socket().config.auth.creds, { registered: true });
    a.socket().emit('creds.update', { registered: true });
    a.socket().open();
    // Events are handled in order: once 'opened' is reported the credentials are stored.
    await eventually(() => expect(eventsPaired.statuses.map((e) => e.event)).toEqual(['opened']));
    await b.driver.connect(paired, new RecordedEvents(), { pairingPhoneNumber: '5511912345678' });
    expect(b.sockets).toHaveLength(1);
    expect((await a.driver.leases.holder(paired.id))!.owner).toBe('worker-g');
    await a.driver.shutdown();
    await b.driver.shutdown();
  });

  test('a deleted connection: its owner logs the device out at the next renewal', async () => {
    const h = harness('worker-del');
    const connection = await newConnection();
    await h.driver.connect(connection, new RecordedEvents());
    h.socket().open();
    await t.db.deleteFrom('connections').where('id', '=', connection.id).execute();
    await renewNow(h);
    await eventually(() => expect(h.socket().loggedOut).toBe(1));
    expect(h.driver.runningSessions()).toEqual([]);
  });

  test('a pending reconnect does not run once the lease is gone', async () => {
    const clock = new FakeClock();
    const a = harness('worker-c', clock);
    const b = harness('worker-d', clock);
    const connection = await newConnection();
    await a.driver.connect(connection, new RecordedEvents());
    a.socket().emitClose(428);
    await eventually(() => expect(a.timers.reconnectDelays()).toEqual([1_000]));
    clock.advance(30_001);
    await b.driver.connect(connection, new RecordedEvents());
    a.timers.runReconnects();
    await eventually(() => expect(a.driver.runningSessions()).toEqual([]));
    expect(a.sockets).toHaveLength(1);
    expect(b.sockets).toHaveLength(1);
    await b.driver.shutdown();
  });

  test('disconnect here: the socket ends, the pairing stays, the lease is released', async () => {
    const h = harness('worker-disc');
    const { connection, events } = await connectedSession(h);
    h.socket().emit('creds.update', {});
    h.socket().open();
    await eventually(() => expect(events.statuses).toHaveLength(1));
    await h.driver.disconnect(connection, { logout: false });
    expect(h.socket().ended).toBe(1);
    expect(h.socket().loggedOut).toBe(0);
    expect(await hasAuthState(t.db, connection.id)).toBe(true);
    expect(await h.driver.leases.holder(connection.id)).toBeUndefined();
    expect(h.timers.pending.size).toBe(0);
    await Bun.sleep(5);
    expect(events.statuses).toHaveLength(1); // user-initiated: the service records it, not the driver

    // Connecting again resumes the stored pairing.
    await h.driver.connect(connection, events);
    expect(h.socket().config.auth.creds.advSecretKey).toBe(h.sockets[0]!.config.auth.creds.advSecretKey);
    await h.driver.shutdown();
  });

  test('logout on another worker: the owner logs its socket out at its next renewal; the pairing is gone', async () => {
    const clock = new FakeClock();
    const owner = harness('worker-owner', clock);
    const other = harness('worker-other', clock);
    const { connection, events } = await connectedSession(owner);
    owner.socket().emit('creds.update', {});
    owner.socket().open();
    await eventually(() => expect(events.statuses).toHaveLength(1));

    await other.driver.disconnect(connection, { logout: true });
    expect(await hasAuthState(t.db, connection.id)).toBe(false);
    await renewNow(owner);
    await eventually(() => expect(owner.socket().loggedOut).toBe(1));
    expect(owner.driver.runningSessions()).toEqual([]);
    expect(await hasAuthState(t.db, connection.id)).toBe(false);
    await Bun.sleep(5);
    expect(events.statuses).toHaveLength(1);
  });
});

/** Runs the keeper's pending renewal now. */
async function renewNow(h: Harness): Promise<void> {
  const renewal = [...h.timers.pending.entries()].find(([, p]) => p.ms === 10_000);
  expect(renewal).toBeDefined();
  h.timers.pending.delete(renewal![0]);
  renewal![1].callback();
}

/** The most a TCP socket buffers on one side (`net.ipv4.tcp_rmem` or `tcp_wmem`, its maximum), or Linux's default. */
function socketBufferLimit(setting: 'tcp_rmem' | 'tcp_wmem'): number {
  const fallback = setting === 'tcp_rmem' ? 6 * 1024 * 1024 : 4 * 1024 * 1024;
  try {
    const max = Number(readFileSync(`/proc/sys/net/ipv4/${setting}`, 'utf8').trim().split(/\s+/)[2]);
    return Number.isFinite(max) && max > 0 ? max : fallback;
  } catch {
    return fallback;
  }
}
