import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startGraphSimulator, type GraphSimulator } from '../support/graph-simulator.ts';
import { connectionEvents, useEventWatch } from '../support/connections.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { messageSettled } from '../support/wait.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * Sending and receiving on the sandbox network, end to end over HTTP (issue 3 items 3, 4, 7;
 * spec 1.9, 2.13, 4.3, 6.1, 7, 8). ARCHITECTURE.md: "a sandbox-only endpoint injects incoming
 * messages, receipts and presence … the tests run end to end on it".
 */

/** The platform an official connection's credentials are confirmed with (one test makes one). */
let sim: GraphSimulator;
type Owner = { userId: string; workspaceId: string; token: string };
let connectionId: string;
let phoneNumber: string;

beforeAll(async () => {
  // FREE workspaces get 2 message credits a month here (the quota test); PRO ones keep the default.
  sim = await startGraphSimulator();
}, HOOK_TIMEOUT);

const service = useTestService(() => ({ env: { PLAN_FREE_MESSAGES: '2', CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });
const eventWatch = useEventWatch(service);

beforeAll(async () => {
  const connected = await newConnectedConnection(owner.token, 'main');
  connectionId = connected.id;
  phoneNumber = connected.phoneNumber;
}, HOOK_TIMEOUT);

afterAll(async () => {
  sim?.stop();
}, HOOK_TIMEOUT);

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

async function newConnectedConnection(apikey: string, name: string): Promise<{ id: string; phoneNumber: string }> {
  const created = await service.call('POST', '/v3/connections', { apikey, body: { name } });
  expect(created.status).toBe(201);
  // The tests read the connection's events: a webhook reads them, so they are logged.
  await eventWatch.watch(apikey, created.body.id);
  const connected = await service.call('POST', `/v3/connections/${created.body.id}/connect`, { apikey });
  expect(connected.body.status).toBe('CONNECTED');
  return { id: created.body.id, phoneNumber: connected.body.phoneNumber };
}

const send = (body: Record<string, unknown>, options: { apikey?: string; connection?: string; headers?: Record<string, string> } = {}) =>
  service.call('POST', `/v3/connections/${options.connection ?? connectionId}/chats/messages`, {
    apikey: options.apikey ?? owner.token,
    body,
    headers: options.headers,
  });

const inject = (body: Record<string, unknown>, connection = connectionId, apikey = owner.token) =>
  service.call('POST', `/v3/connections/${connection}/sandbox/messages`, { apikey, body });

const getMessage = (id: string, connection = connectionId, apikey = owner.token) =>
  service.call('GET', `/v3/connections/${connection}/chats/messages/${id}`, { apikey });

/** Polls the message until it leaves PENDING (the driver send runs on the queue). */
const settled = (id: string, connection = connectionId, apikey = owner.token, timeoutMs = 20_000): Promise<any> => messageSettled(service, apikey, connection, id, { timeout: timeoutMs });

const summary = async (apikey: string) => (await service.call('GET', '/v3/summary', { apikey })).body.messages;

/** Spec 7.2 (2): "Coded: `{ message: <MACHINE_CODE>, hint: <localized human text> }`". */
function expectCoded(res: { status: number; body: any }, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['hint', 'message']);
  expect(res.body.message).toBe(code);
  expect(res.body.hint.length).toBeGreaterThan(0);
}

const events = (event: string, connection = connectionId): Promise<any[]> => connectionEvents(service, connection, event);

async function messageRows(connection: string) {
  return service.runtime.ctx.db.selectFrom('messages').selectAll().where('connection_id', '=', connection).execute();
}

let contactCounter = 0;
/** A fresh contact number per test, so chats do not mix. */
const newContact = () => `55119${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++contactCounter).padStart(2, '0')}`;

const ALWAYS = ['isAiMessage', 'key', 'message', 'messageTimestamp', 'messageType', 'pushName', 'source', 'status'];

/**
 * Spec 2.13: "Closed shape for `messages.upsert` … Always-present keys: key.id, key.remoteJid,
 * key.fromMe, pushName, status, messageType, message, messageTimestamp, source, isAiMessage."
 * "Conditional keys (absent, not null, when they do not apply)".
 */
function expectClosedShape(data: any, conditional: Array<'contextInfo' | 'aiMessageSource' | 'album'> = []): void {
  expect(Object.keys(data).sort()).toEqual([...ALWAYS, ...conditional].sort());
  expect(Object.keys(data.key).sort()).toEqual(['fromMe', 'id', 'remoteJid']);
  expect(typeof data.key.id).toBe('string');
  expect(data.key.fromMe).toBe(false);
  expect(typeof data.pushName).toBe('string');
  // "`status` … on `messages.upsert` always `DELIVERY_ACK`".
  expect(data.status).toBe('DELIVERY_ACK');
  // "`messageTimestamp` | integer | Seconds since epoch".
  expect(Number.isInteger(data.messageTimestamp)).toBe(true);
  expect(['android', 'ios', 'web', 'unknown']).toContain(data.source);
  expect(typeof data.isAiMessage).toBe('boolean');
  expect(typeof data.message).toBe('object');
}

const B64 = (bytes: number[]) => Buffer.from(bytes).toString('base64');

// ------------------------------------------------------------------------------------------
// Sending
// ------------------------------------------------------------------------------------------

describe('sending every kind on a connected sandbox connection', () => {
  const to = '+55 (11) 98888-0001';
  const remoteJid = '5511988880001@s.whatsapp.net';
  const first: { id?: string; externalId?: string } = {};

  const kinds: Array<[string, Record<string, unknown>]> = [
    ['text', { text: 'Hello from the sandbox' }],
    ['image', { image: { url: 'https://example.com/cat.jpg', caption: 'A cat' } }],
    ['video', { video: { url: 'https://example.com/clip.mp4', caption: 'A clip' } }],
    ['audio', { audio: { url: 'https://example.com/voice.ogg', voiceNote: true } }],
    ['document', { document: { url: 'https://example.com/terms.pdf', fileName: 'terms.pdf', caption: 'Terms' } }],
    ['sticker', { sticker: { url: 'https://example.com/sticker.webp' } }],
    ['location', { location: { latitude: -23.55, longitude: -46.63, name: 'Office', address: 'Av. Paulista' } }],
    ['contacts', { contacts: [{ name: 'Ana Souza', phones: ['+5511977776666'], emails: ['ana@example.com'], organization: 'ACME' }] }],
    ['list', { list: { body: 'Pick one', buttonText: 'Options', sections: [{ title: 'Plans', rows: [{ id: 'basic', title: 'Basic' }, { id: 'pro', title: 'Pro', description: 'More' }] }] } }],
    ['buttons', { buttons: { body: 'Confirm?', buttons: [{ id: 'yes', title: 'Yes' }, { id: 'no', title: 'No' }] } }],
  ];

  for (const [kind, content] of kinds) {
    test(`${kind}: 201 PENDING at once, then SENT with a network id`, async () => {
      // Issue 3 item 3: "Returns at once with a message id and status; the driver send runs on the queue";
      // spec 4.3: "POST /v3/connections/{connectionId}/chats/messages | { to: <phone number string>, … } | 201".
      const res = await send({ to, ...content });
      expect(res.status).toBe(201);
      expect(res.body.id).toMatch(UUID);
      expect(res.body).toMatchObject({ connectionId, direction: 'outbound', remoteJid, kind, status: 'PENDING', externalId: null, error: null });
      expect(res.body.content).toEqual({ kind, ...content });
      const done = await settled(res.body.id);
      expect(done.status).toBe('SENT');
      expect(typeof done.externalId).toBe('string');
      expect(done.externalId.length).toBeGreaterThan(0);
      if (kind === 'text') Object.assign(first, { id: res.body.id, externalId: done.externalId });
    });
  }

  test('reaction to a previous message (by our id): SENT, and the reaction names its network id', async () => {
    expect(first.id).toBeDefined();
    const res = await send({ to, reaction: { messageId: first.id, emoji: '👍' } });
    expect(res.status).toBe(201);
    expect(res.body.content.reaction).toEqual({ messageId: first.externalId, emoji: '👍' });
    expect((await settled(res.body.id)).status).toBe('SENT');
  });

  test('a reply (replyTo our id) records the quoted network id', async () => {
    const res = await send({ to, text: 'replying', replyTo: first.id });
    expect(res.status).toBe(201);
    expect(res.body.replyTo).toBe(first.externalId);
    expect((await settled(res.body.id)).status).toBe('SENT');
  });

  test('a reaction or reply to a message this connection never saw is 400', async () => {
    expectStandardError(await send({ to, reaction: { messageId: 'NOPE', emoji: '👍' } }), 400, 'Bad Request');
    expectStandardError(await send({ to, text: 'x', replyTo: crypto.randomUUID() }), 400, 'Bad Request');
  });

  test('template on the sandbox is 422: templates need an official connection', async () => {
    // Spec 1.8 / 4.3: templates are an official-connection feature; 7.1 "422 | … current resource state blocks it".
    const before = (await messageRows(connectionId)).length;
    const res = await send({ to, template: { name: 'welcome', language: 'en_US' } });
    expectStandardError(res, 422, 'Unprocessable Entity');
    expect(res.body.message).toContain('official');
    const viaRoute = await service.call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, {
      apikey: owner.token,
      body: { to, name: 'welcome', language: 'en_US' },
    });
    expectStandardError(viaRoute, 422, 'Unprocessable Entity');
    expect((await messageRows(connectionId)).length).toBe(before);
  });

  test('a message that went out on the unofficial sandbox is published as send.message (spec 6.1)', async () => {
    // Spec 6.1: "`send.message` | on an unofficial connection a message went out (through the API …)".
    const published = (await events('send.message')).filter((e) => e.data.key.id === first.externalId);
    expect(published).toHaveLength(1);
    const e = published[0];
    expect(Object.keys(e).sort()).toEqual(['connectionId', 'data', 'event', 'remoteJid', 'sender']);
    expect(e).toMatchObject({ connectionId, remoteJid, sender: phoneNumber });
    expect(e.data.key).toEqual({ id: first.externalId, remoteJid, fromMe: true });
    expect(e.data.message).toEqual({ conversation: 'Hello from the sandbox' });
    expect(Number.isInteger(e.data.messageTimestamp)).toBe(true);
  });
});

describe('send validation', () => {
  test('two content fields → 400 listing the problem', async () => {
    const res = await send({ to: '5511988880002', text: 'hi', location: { latitude: 1, longitude: 1 } });
    expectStandardError(res, 400, 'Bad Request');
    expect(JSON.stringify(res.body.message)).toContain('exactly one');
  });

  test('no content field → 400', async () => {
    expectStandardError(await send({ to: '5511988880002' }), 400, 'Bad Request');
  });

  test('a bad `to` → 400 with the message as an array (spec 7.2: "array of strings for validation failures")', async () => {
    for (const to of ['12', 'not a number', '+0 11 2222', 'x@y.z']) {
      const res = await send({ to, text: 'hi' });
      expectStandardError(res, 400, 'Bad Request');
      expect(Array.isArray(res.body.message)).toBe(true);
      expect(res.body.message.join(' ')).toContain('body.to');
    }
    // A missing `to` is refused too.
    const missing = await send({ text: 'hi' });
    expectStandardError(missing, 400, 'Bad Request');
    expect(Array.isArray(missing.body.message)).toBe(true);
  });

  test('broken content fields are all reported at once', async () => {
    const res = await send({ to: '5511988880002', location: { latitude: 200, longitude: -500 } });
    expectStandardError(res, 400, 'Bad Request');
    expect(res.body.message).toHaveLength(2);
    const media = await send({ to: '5511988880002', image: { caption: 'no source' } });
    expectStandardError(media, 400, 'Bad Request');
  });

  test('nothing is stored by a refused send', async () => {
    const before = (await messageRows(connectionId)).length;
    await send({ to: '5511988880002', text: 'hi', image: { url: 'https://example.com/x.jpg' } });
    await send({ to: 'bad', text: 'hi' });
    expect((await messageRows(connectionId)).length).toBe(before);
  });

  test('sending on a DISCONNECTED connection → 422', async () => {
    // Spec 7.1: "422 | Valid request but current resource state blocks it".
    const idle = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'idle' } });
    const res = await send({ to: '5511988880002', text: 'hi' }, { connection: idle.body.id });
    expectStandardError(res, 422, 'Unprocessable Entity');
    expect(res.body.message).toContain('DISCONNECTED');
    expect(await messageRows(idle.body.id)).toHaveLength(0);
  });

  test('sending on an unknown connection → coded CONNECTION_NOT_FOUND', async () => {
    expectCoded(await send({ to: '5511988880002', text: 'hi' }, { connection: crypto.randomUUID() }), 404, 'CONNECTION_NOT_FOUND');
  });
});

describe('credits (spec 1.9: "each sent message consumes one plan credit")', () => {
  test('each sent message consumes exactly one credit', async () => {
    const ws = await service.bootstrap({ plan: 'PRO' });
    const conn = await newConnectedConnection(ws.token, 'credits');
    const start = await summary(ws.token);
    expect(start).toMatchObject({ consumed: 0, reserved: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await send({ to: '5511988881000', text: `n${i}` }, { apikey: ws.token, connection: conn.id })).body.id);
    for (const id of ids) expect((await settled(id, conn.id, ws.token)).status).toBe('SENT');
    const end = await summary(ws.token);
    expect(end.consumed).toBe(3);
    expect(end.reserved).toBe(0);
    expect(end.available).toBe(start.available - 3);
  });

  test('Idempotency-Key: the same key twice answers the first answer again (201, Idempotent-Replayed: true) with the same message, and one credit is used', async () => {
    const ws = await service.bootstrap({ plan: 'PRO' });
    const conn = await newConnectedConnection(ws.token, 'idem');
    const headers = { 'idempotency-key': `key-${crypto.randomUUID()}` };
    const first = await send({ to: '5511988881001', text: 'once' }, { apikey: ws.token, connection: conn.id, headers });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await send({ to: '5511988881001', text: 'once' }, { apikey: ws.token, connection: conn.id, headers });
    // Issue 20 §8: POST answers 201 (spec 7.1); a replay is told apart by its header.
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
    expect((await settled(first.body.id, conn.id, ws.token)).status).toBe('SENT');
    // A retry after delivery still answers the first message.
    const third = await send({ to: '5511988881001', text: 'once' }, { apikey: ws.token, connection: conn.id, headers });
    expect(third.status).toBe(201);
    expect(third.body.id).toBe(first.body.id);
    expect(third.body.status).toBe('SENT');
    expect(await messageRows(conn.id)).toHaveLength(1);
    expect((await summary(ws.token)).consumed).toBe(1);
  });

  test('Idempotency-Key: two identical requests at once store one message', async () => {
    const ws = await service.bootstrap({ plan: 'PRO' });
    const conn = await newConnectedConnection(ws.token, 'idem-race');
    const headers = { 'idempotency-key': `race-${crypto.randomUUID()}` };
    const answers = await Promise.all([0, 1, 2].map(() => send({ to: '5511988881002', text: 'once' }, { apikey: ws.token, connection: conn.id, headers })));
    for (const a of answers) expect(a.status).toBe(201);
    // One of them sent; the others are replays of its answer.
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await messageRows(conn.id)).toHaveLength(1);
    await settled(answers[0]!.body.id, conn.id, ws.token);
    expect((await summary(ws.token)).consumed).toBe(1);
  });

  test('out of credits: the third send on a 2-credit plan is 403 USER_PLAN_EXCEEDED_MESSAGES and creates nothing', async () => {
    // Spec 7.2: "message quota reached | `USER_PLAN_EXCEEDED_MESSAGES` | 403".
    const ws = await service.bootstrap({ plan: 'FREE' });
    const conn = await newConnectedConnection(ws.token, 'free');
    expect((await send({ to: '5511988881003', text: '1' }, { apikey: ws.token, connection: conn.id })).status).toBe(201);
    expect((await send({ to: '5511988881003', text: '2' }, { apikey: ws.token, connection: conn.id })).status).toBe(201);
    expectCoded(await send({ to: '5511988881003', text: '3' }, { apikey: ws.token, connection: conn.id }), 403, 'USER_PLAN_EXCEEDED_MESSAGES');
    expect(await messageRows(conn.id)).toHaveLength(2);
    expect((await summary(ws.token)).available).toBe(0);
  });

  test('a send to a number not on the network ends FAILED with an error, and its credit comes back', async () => {
    // Sandbox: "Recipients starting with 999 simulate numbers that are not on the network".
    // Spec 3.2 (the delivery model we follow): "`PENDING` | delivery outcome | … `FAILED` | … `externalError` (set on `FAILED`)".
    const ws = await service.bootstrap({ plan: 'PRO' });
    const conn = await newConnectedConnection(ws.token, 'fail');
    const start = await summary(ws.token);
    const res = await send({ to: '9991234567', text: 'hello?' }, { apikey: ws.token, connection: conn.id });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('PENDING');
    const done = await settled(res.body.id, conn.id, ws.token);
    expect(done.status).toBe('FAILED');
    expect(done.externalId).toBeNull();
    expect(done.error).toMatchObject({ code: 'not_on_network' });
    expect(done.error.title).toContain('not on the network');
    const end = await summary(ws.token);
    expect(end.available).toBe(start.available);
    expect(end.consumed).toBe(0);
    expect(end.reserved).toBe(0);
    // The failure is published as messages.update with statuses[].errors (spec 6.1).
    const updates = await events('messages.update', conn.id);
    expect(updates).toHaveLength(1);
    expect(updates[0].data.statuses[0]).toMatchObject({ status: 'failed', errors: [{ code: 'not_on_network' }] });
  });
});

describe('roles (spec 2.14: "Send messages | yes | yes | yes | no"; "Read messages on a connection | yes | yes | no | no")', () => {
  let manager: { token: string };
  let agent: { token: string };
  let admin: { token: string };

  beforeAll(async () => {
    manager = await memberWithToken(service, owner, 'MANAGER');
    agent = await memberWithToken(service, owner, 'AGENT');
    admin = await memberWithToken(service, owner, 'ADMIN');
  }, HOOK_TIMEOUT);

  test('a Manager can send but cannot read the history', async () => {
    const sent = await send({ to: '5511988882000', text: 'from the manager' }, { apikey: manager.token });
    expect(sent.status).toBe(201);
    for (const path of [
      `/v3/connections/${connectionId}/chats/messages?chat=5511988882000`,
      `/v3/connections/${connectionId}/chats`,
      `/v3/connections/${connectionId}/chats/messages/${sent.body.id}`,
    ]) {
      const res = await service.call('GET', path, { apikey: manager.token });
      expectStandardError(res, 403, 'Forbidden');
      expect(res.body.message).toBe('Insufficient account permissions');
    }
    expect((await settled(sent.body.id)).status).toBe('SENT');
  });

  test('an Agent cannot send (403) and nothing is stored', async () => {
    const before = (await messageRows(connectionId)).length;
    const res = await send({ to: '5511988882000', text: 'from the agent' }, { apikey: agent.token });
    expectStandardError(res, 403, 'Forbidden');
    expect(res.body.message).toBe('Insufficient account permissions');
    expect((await messageRows(connectionId)).length).toBe(before);
  });

  test('an Admin can read the history', async () => {
    const res = await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=5511988882000`, { apikey: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.map((m: any) => m.content.text)).toEqual(['from the manager']);
  });
});

// ------------------------------------------------------------------------------------------
// Receiving
// ------------------------------------------------------------------------------------------

describe('receiving every 2.13 type, normalized to the closed shape', () => {
  const from = '5511977770001';
  const remoteJid = `${from}@s.whatsapp.net`;
  let lastExternal = '';

  /** Injects one message, checks the stored content and its messages.upsert event; answers the data. */
  async function receive(body: Record<string, unknown>, conditional: Array<'contextInfo' | 'aiMessageSource' | 'album'> = []): Promise<any> {
    const res = await inject({ from, pushName: 'Ana', ...body });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ direction: 'inbound', status: 'RECEIVED', remoteJid });
    const data = res.body.content;
    expectClosedShape(data, conditional);
    expect(data.key.remoteJid).toBe(remoteJid);
    expect(data.pushName).toBe('Ana');
    expect(res.body.externalId).toBe(data.key.id);
    // Spec 6.1: "Envelope: `{ event, connectionId, remoteJid, sender, data }`"; "`sender` is the connection's own number".
    const published = (await events('messages.upsert')).filter((e) => e.data.key.id === data.key.id);
    expect(published).toHaveLength(1);
    expect(Object.keys(published[0]).sort()).toEqual(['connectionId', 'data', 'event', 'remoteJid', 'sender']);
    expect(published[0]).toMatchObject({ event: 'messages.upsert', connectionId, remoteJid, sender: phoneNumber });
    expect(published[0].data).toEqual(data);
    lastExternal = data.key.id;
    return data;
  }

  test('conversation → { conversation: <text> }, no conditional keys', async () => {
    const data = await receive({ text: 'Hi there', timestamp: 1_750_000_000, source: 'ios' });
    expect(data.messageType).toBe('conversation');
    expect(data.message).toEqual({ conversation: 'Hi there' });
    expect(data.messageTimestamp).toBe(1_750_000_000);
    expect(data.source).toBe('ios');
    expect(data.isAiMessage).toBe(false);
    expect('contextInfo' in data).toBe(false);
    expect('aiMessageSource' in data).toBe(false);
    expect('album' in data).toBe(false);
  });

  test('messageTimestamp defaults to now, in integer seconds', async () => {
    const before = Math.floor(Date.now() / 1000);
    const data = await receive({ text: 'now' });
    expect(data.messageTimestamp).toBeGreaterThanOrEqual(before - 1);
    expect(data.messageTimestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
  });

  const media: Array<[string, string, Record<string, unknown>]> = [
    ['imageMessage', 'image/jpeg', {}],
    ['videoMessage', 'video/mp4', { seconds: 3 }],
    ['audioMessage', 'audio/ogg', { ptt: true, seconds: 2 }],
    ['documentMessage', 'application/pdf', {}],
    ['stickerMessage', 'image/webp', {}],
  ];
  for (const [type, mimetype, extra] of media) {
    test(`${type} with media → node with mimetype and a signed downloadMediaUrl`, async () => {
      // Spec 2.13: "`imageMessage` (node `imageMessage` with `mimetype`, `downloadMediaUrl`)".
      const withFile = type === 'documentMessage' ? { fileName: 'report.pdf' } : {};
      const caption = type === 'audioMessage' || type === 'stickerMessage' ? {} : { text: `a ${type}` };
      const data = await receive({ type, node: extra, media: { base64: B64([1, 2, 3, 4]), mimetype, ...withFile }, ...caption });
      expect(data.messageType).toBe(type);
      expect(Object.keys(data.message)).toEqual([type]);
      const node = data.message[type];
      expect(node).toMatchObject({ ...extra, mimetype, ...withFile, ...(caption.text ? { caption: caption.text } : {}) });
      expect(node.downloadMediaUrl).toMatch(new RegExp(`/v3/connections/media/${UUID.source.slice(1, -1)}/download\\?token=`));
    });
  }

  test('albumMessage → { albumMessage: { expectedImageCount, expectedVideoCount } }; its items carry album {id, index}', async () => {
    // Spec 2.13: "`album` | the message is part of an album: `{ id: <parent message id>, index: <position> }`".
    const parent = await receive({ type: 'albumMessage', node: { expectedImageCount: 2, expectedVideoCount: 0 } });
    expect(parent.message).toEqual({ albumMessage: { expectedImageCount: 2, expectedVideoCount: 0 } });
    for (const index of [0, 1]) {
      const item = await receive({ type: 'imageMessage', media: { base64: B64([9, index]), mimetype: 'image/png' }, album: { id: parent.key.id, index } }, ['album']);
      expect(item.album).toEqual({ id: parent.key.id, index });
    }
  });

  const populated: Array<[string, Record<string, unknown>]> = [
    ['locationMessage', { degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Office', address: 'Av. Paulista 1000' }],
    ['contactMessage', { displayName: 'Bruno', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Bruno\nTEL;type=CELL;waid=5511966665555:+55 11 96666-5555\nEND:VCARD' }],
    ['pollCreationMessage', { name: 'Lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }], selectableOptionsCount: 1 }],
    ['buttonsResponseMessage', { selectedButtonId: 'yes', selectedDisplayText: 'Yes' }],
    ['listResponseMessage', { title: 'Pro', listType: 1, singleSelectReply: { selectedRowId: 'pro' } }],
  ];
  for (const [type, node] of populated) {
    test(`${type} arrives populated`, async () => {
      // Spec 2.13: "Location, contact cards, polls, button replies and list choices also arrive populated".
      const data = await receive({ type, node });
      expect(data.messageType).toBe(type);
      expect(data.message).toEqual({ [type]: node });
    });
  }

  test('templateButtonReplyMessage carries selectedId (the button payload)', async () => {
    // Spec 2.13: "`templateButtonReplyMessage` (field `selectedId`)"; 6.1: "`selectedId` is the payload sent".
    const data = await receive({ type: 'templateButtonReplyMessage', node: { selectedId: 'card-2-buy', selectedDisplayText: 'Buy' } });
    expect(data.message.templateButtonReplyMessage.selectedId).toBe('card-2-buy');
  });

  test('interactiveResponseMessage carries nativeFlowResponseMessage.paramsJson as a JSON string', async () => {
    // Spec 2.13: "`interactiveResponseMessage` (field `nativeFlowResponseMessage.paramsJson`, a JSON string to parse)".
    const params = { flow_token: 'ft_123', screen_0_name: 'Ana' };
    const data = await receive({
      type: 'interactiveResponseMessage',
      node: { body: { text: 'Sent' }, nativeFlowResponseMessage: { name: 'flow', paramsJson: JSON.stringify(params), version: 3 } },
    });
    const paramsJson = data.message.interactiveResponseMessage.nativeFlowResponseMessage.paramsJson;
    expect(typeof paramsJson).toBe('string');
    expect(JSON.parse(paramsJson)).toEqual(params);
  });

  test('reactionMessage names the message reacted to', async () => {
    const target = lastExternal;
    const data = await receive({ type: 'reactionMessage', node: { key: { id: target, remoteJid, fromMe: false }, text: '❤️' } });
    expect(data.message).toEqual({ reactionMessage: { key: { id: target, remoteJid, fromMe: false }, text: '❤️' } });
  });

  test('a type outside the fixed list keeps its name with an empty message {}', async () => {
    // Spec 2.13: "`message` | object | Node for that type. Empty `{}` when the type is unknown to the fixed list of nodes".
    const data = await receive({ type: 'ephemeralSettingMessage', node: { seconds: 86_400 } });
    expect(data.messageType).toBe('ephemeralSettingMessage');
    expect(data.message).toEqual({});
  });

  test('contextInfo only for a reply or mentions; absent otherwise', async () => {
    // Spec 2.13: "`contextInfo` | the message is a reply or has mentions".
    const quoted = lastExternal;
    const reply = await receive({ text: 'quoting you', replyTo: quoted }, ['contextInfo']);
    expect(reply.contextInfo).toEqual({ stanzaId: quoted });
    const mention = await receive({ text: '@bruno look', mentions: ['5511966665555@s.whatsapp.net'] }, ['contextInfo']);
    expect(mention.contextInfo).toEqual({ mentionedJid: ['5511966665555@s.whatsapp.net'] });
    const plain = await receive({ text: 'plain', mentions: [] });
    expect('contextInfo' in plain).toBe(false);
  });

  test('isAiMessage true brings aiMessageSource; false leaves it out', async () => {
    // Spec 2.13: "`aiMessageSource` | `isAiMessage` is true; value is a constant naming the network-business native AI".
    const ai = await receive({ text: 'I am the assistant', isAiMessage: true }, ['aiMessageSource']);
    expect(ai.isAiMessage).toBe(true);
    expect(typeof ai.aiMessageSource).toBe('string');
    expect(ai.aiMessageSource.length).toBeGreaterThan(0);
  });

  test('a message the account typed on the phone (fromMe) is published as send.message, not messages.upsert', async () => {
    // Spec 6.1: "`send.message` | on an unofficial connection a message went out (… or typed on the phone)".
    const res = await inject({ from, text: 'typed on the phone', fromMe: true });
    expect(res.status).toBe(201);
    const id = res.body.externalId;
    expect((await events('messages.upsert')).some((e) => e.data.key.id === id)).toBe(false);
    const out = (await events('send.message')).filter((e) => e.data.key.id === id);
    expect(out).toHaveLength(1);
    expect(out[0].data.key.fromMe).toBe(true);
  });

  test('invalid injections are 400: a conversation without text, media on a non-media type', async () => {
    expectStandardError(await inject({ from }), 400, 'Bad Request');
    expectStandardError(await inject({ from, type: 'locationMessage', media: { base64: 'AA==', mimetype: 'image/png' } }), 400, 'Bad Request');
  });
});

describe('dedupe: "Deduplicate on it" (spec 2.13, key.id)', () => {
  test('the same network id delivered twice is stored once and published once', async () => {
    const externalId = `SANDBOX.REPLAY.${crypto.randomUUID()}`;
    const body = { from: '5511977770002', text: 'only once', externalId };
    const first = await inject(body);
    const second = await inject({ ...body, text: 'a different body on replay' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.content.message).toEqual({ conversation: 'only once' });
    const rows = (await messageRows(connectionId)).filter((r) => r.external_id === externalId);
    expect(rows).toHaveLength(1);
    expect((await events('messages.upsert')).filter((e) => e.data.key.id === externalId)).toHaveLength(1);
  });

  test('concurrent deliveries of one network id: stored once, published once', async () => {
    const externalId = `SANDBOX.RACE.${crypto.randomUUID()}`;
    const answers = await Promise.all([0, 1, 2, 3].map(() => inject({ from: '5511977770002', text: 'race', externalId })));
    for (const a of answers) expect(a.status).toBe(201);
    expect((await messageRows(connectionId)).filter((r) => r.external_id === externalId)).toHaveLength(1);
    expect((await events('messages.upsert')).filter((e) => e.data.key.id === externalId)).toHaveLength(1);
  });
});

describe('history', () => {
  const contact = newContact();
  const ids: string[] = [];

  beforeAll(async () => {
    // Five messages at distinct times; the contact's name comes from pushName.
    for (let i = 0; i < 5; i++) {
      const res = await inject({ from: contact, pushName: 'Carla', text: `m${i}`, timestamp: 1_760_000_000 + i * 60 });
      ids.push(res.body.id);
    }
  }, HOOK_TIMEOUT);

  test('GET …/chats/messages?chat=<number>&limit=2: a bare array, oldest first, the newest page first', async () => {
    const res = await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${contact}&limit=2`, { apikey: owner.token });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((m: any) => m.id)).toEqual([ids[3], ids[4]]);
    expect(res.body.map((m: any) => m.content.message.conversation)).toEqual(['m3', 'm4']);
  });

  test('cursor paging walks back to the beginning; the last page has fewer than limit', async () => {
    const seen: string[][] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard++) {
      const res = await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=%2B${contact}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { apikey: owner.token });
      expect(res.status).toBe(200);
      seen.push(res.body.map((m: any) => m.id));
      if (res.body.length < 2) break;
      cursor = res.body[0].id;
    }
    expect(seen).toEqual([[ids[3]!, ids[4]!], [ids[1]!, ids[2]!], [ids[0]!]]);
  });

  test('a bad limit or a cursor from another chat is 400', async () => {
    for (const limit of ['0', '101', 'abc']) {
      expectStandardError(await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${contact}&limit=${limit}`, { apikey: owner.token }), 400, 'Bad Request');
    }
    const elsewhere = await inject({ from: newContact(), text: 'elsewhere' });
    expectStandardError(
      await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${contact}&cursor=${elsewhere.body.id}`, { apikey: owner.token }),
      400,
      'Bad Request',
    );
  });

  test('GET …/chats lists the chat with the contact name (pagination envelope)', async () => {
    // Spec 2.2: "Response body: `{ data: [..], total, totalPages, currentPage, perPage }`".
    const res = await service.call('GET', `/v3/connections/${connectionId}/chats?s=${contact}`, { apikey: owner.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['currentPage', 'data', 'perPage', 'total', 'totalPages']);
    expect(res.body.total).toBe(1);
    expect(res.body.data[0]).toMatchObject({ remoteJid: `${contact}@s.whatsapp.net`, name: 'Carla' });
    expect(res.body.data[0].lastContactMessageAt).toBe(new Date((1_760_000_000 + 4 * 60) * 1000).toISOString());
    const all = await service.call('GET', `/v3/connections/${connectionId}/chats?per_page=100`, { apikey: owner.token });
    expect(all.body.data.some((c: any) => c.remoteJid === `${contact}@s.whatsapp.net`)).toBe(true);
  });
});

describe('receipts (issue 3 item 3: "delivery receipts update the message")', () => {
  const receipt = (messageId: string, status: string) =>
    service.call('POST', `/v3/connections/${connectionId}/sandbox/receipts`, { apikey: owner.token, body: { messageId, status } });

  test('DELIVERED then READ move the status; a late DELIVERED after READ leaves READ', async () => {
    const sent = await send({ to: '5511988883000', text: 'will be read' });
    const done = await settled(sent.body.id);
    expect(done.status).toBe('SENT');

    expect((await receipt(sent.body.id, 'DELIVERED')).body.status).toBe('DELIVERED');
    expect((await getMessage(sent.body.id)).body.status).toBe('DELIVERED');
    // By network id too.
    expect((await receipt(done.externalId, 'READ')).body.status).toBe('READ');
    expect((await receipt(sent.body.id, 'DELIVERED')).body.status).toBe('READ');
    expect((await receipt(sent.body.id, 'FAILED')).body.status).toBe('READ');
    expect((await getMessage(sent.body.id)).body.status).toBe('READ');

    // Spec 6.1: "`messages.update` | a delivery status changed (sent, delivered, read)": the send itself, then each receipt.
    const updates = (await events('messages.update')).filter((e) => e.data.key?.id === done.externalId);
    expect(updates.map((e) => e.data.statuses[0].status)).toEqual(['sent', 'delivered', 'read', 'delivered', 'failed']);
    expect(updates[0]).toMatchObject({ connectionId, remoteJid: '5511988883000@s.whatsapp.net', sender: phoneNumber });
  });

  test('a receipt for a message that never reached the network is 404', async () => {
    expectStandardError(await receipt(crypto.randomUUID(), 'READ'), 404, 'Not Found');
  });
});

describe('presence, edits and deletes pass the provider data through (spec 6.1)', () => {
  test('presence.update, messages.edited and messages.delete are published', async () => {
    const contact = newContact();
    const jid = `${contact}@s.whatsapp.net`;
    const presence = await service.call('POST', `/v3/connections/${connectionId}/sandbox/presence`, { apikey: owner.token, body: { from: contact, presence: 'composing' } });
    expect(presence.status).toBe(201);
    const p = (await events('presence.update')).filter((e) => e.remoteJid === jid);
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ event: 'presence.update', connectionId, sender: phoneNumber, data: { id: jid, presences: { [jid]: { lastKnownPresence: 'composing' } } } });

    const original = await inject({ from: contact, text: 'tpyo' });
    const externalId = original.body.externalId;
    const edit = await service.call('POST', `/v3/connections/${connectionId}/sandbox/edits`, { apikey: owner.token, body: { messageId: externalId, text: 'typo' } });
    expect(edit.status).toBe(201);
    const edited = (await events('messages.edited')).filter((e) => e.data.key.id === externalId);
    expect(edited).toHaveLength(1);
    expect(edited[0]).toMatchObject({ remoteJid: jid, data: { key: { id: externalId, remoteJid: jid }, editedMessage: { conversation: 'typo' } } });

    const del = await service.call('POST', `/v3/connections/${connectionId}/sandbox/deletes`, { apikey: owner.token, body: { messageId: externalId } });
    expect(del.status).toBe(201);
    const deleted = (await events('messages.delete')).filter((e) => e.data.key.id === externalId);
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ remoteJid: jid, data: { key: { id: externalId, remoteJid: jid } } });

    expectStandardError(
      await service.call('POST', `/v3/connections/${connectionId}/sandbox/edits`, { apikey: owner.token, body: { messageId: 'UNKNOWN', text: 'x' } }),
      404,
      'Not Found',
    );
  });
});

describe('sandbox endpoints exist only on sandbox connections (issue 3 item 7: "Disabled unless the connection is a sandbox one")', () => {
  test('on an official connection every sandbox endpoint is 404 and nothing is stored', async () => {
    const business = sim.addBusiness();
    const official = await service.call('POST', '/v3/connections', {
      apikey: owner.token,
      body: { name: 'official', driver: 'cloud-api', credentials: { ...business, verifyToken: 'v' } },
    });
    expect(official.status).toBe(201);
    const id = official.body.id;
    for (const [path, body] of [
      ['messages', { from: '5511977770003', text: 'hi' }],
      ['receipts', { messageId: crypto.randomUUID(), status: 'READ' }],
      ['presence', { from: '5511977770003', presence: 'available' }],
      ['edits', { messageId: 'X', text: 'y' }],
      ['deletes', { messageId: 'X' }],
    ] as const) {
      const res = await service.call('POST', `/v3/connections/${id}/sandbox/${path}`, { apikey: owner.token, body });
      expect(res.status).toBe(404);
    }
    expect(await messageRows(id)).toHaveLength(0);
  });

  test('on a disconnected sandbox connection injection is 422; on an unknown one CONNECTION_NOT_FOUND', async () => {
    const idle = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'idle-sandbox' } });
    expectStandardError(await inject({ from: '5511977770003', text: 'hi' }, idle.body.id), 422, 'Unprocessable Entity');
    expectCoded(await inject({ from: '5511977770003', text: 'hi' }, crypto.randomUUID()), 404, 'CONNECTION_NOT_FOUND');
  });
});
