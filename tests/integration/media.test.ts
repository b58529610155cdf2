import { beforeAll, describe, expect, test } from 'bun:test';
import { downloadLink, issueUploadTicket } from '../../core/media/media.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { messageSettled } from '../support/wait.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, postRaw, UUID } from './helpers.ts';

/**
 * Media (issue 3 item 6; spec 2.13 `downloadMediaUrl`, 4.3 upload and download rows, 5.6, 8):
 * signed download links valid 7 days that need no API key, and signed single-use upload
 * tickets valid 10 minutes.
 */

let connectionId: string;

const service = useTestService();
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'media' } });
  connectionId = created.body.id;
  const connected = await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey: owner.token });
  expect(connected.body.status).toBe('CONNECTED');
}, HOOK_TIMEOUT);

const PNG: Uint8Array<ArrayBuffer> = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 250, 251, 252]);
const DAY = 86_400_000;

async function receiveImage(bytes = PNG, mimetype = 'image/png') {
  const res = await service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, {
    apikey: owner.token,
    body: { from: '5511955550001', type: 'imageMessage', text: 'look', media: { base64: Buffer.from(bytes).toString('base64'), mimetype } },
  });
  expect(res.status).toBe(201);
  const url: string = res.body.content.message.imageMessage.downloadMediaUrl;
  const mediaId = /\/v3\/connections\/media\/([^/]+)\/download/.exec(url)![1]!;
  return { url, mediaId, message: res.body };
}

/** Fetches without any API key. */
async function download(url: string) {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

function linkDeps(now: Date) {
  const ctx = service.runtime.ctx;
  return { clock: { now: () => now }, signingKey: ctx.keys.signing, publicUrl: ctx.config.publicUrl, ids: ctx.ids };
}

const settled = (id: string): Promise<any> => messageSettled(service, owner.token, connectionId, id);

/** A message with uploaded media: accepted (201) and then SENT by the network. */
async function expectSent(body: Record<string, unknown>): Promise<void> {
  const sent = await service.call('POST', `/v3/connections/${connectionId}/chats/messages`, { apikey: owner.token, body });
  expect(sent.status).toBe(201);
  expect((await settled(sent.body.id)).status).toBe('SENT');
}

const postBytes = (url: string, bytes: Uint8Array, contentType: string, headers: Record<string, string> = {}) => postRaw(url, bytes, { 'content-type': contentType, ...headers });

describe('download links of received media (spec 2.13: "signed link valid 7 days, streams raw bytes, needs no `apikey`")', () => {
  test('received media carries downloadMediaUrl; fetching it without apikey streams the exact bytes with their content type', async () => {
    const { url, mediaId } = await receiveImage();
    expect(mediaId).toMatch(UUID);
    expect(url.startsWith(`${service.runtime.ctx.config.publicUrl}/v3/connections/media/${mediaId}/download?token=`)).toBe(true);
    const res = await download(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.bytes).toEqual(PNG);
  });

  test('the bytes are kept durably in the database (issue 3 item 6: "not memory")', async () => {
    const bytes = new Uint8Array([1, 1, 2, 3, 5, 8, 13, 21]);
    const { mediaId } = await receiveImage(bytes, 'image/gif');
    // The media.fetch job keeps the bytes while the network still has them.
    const deadline = Date.now() + 15_000;
    let row: { bytes: Uint8Array | null; mimetype: string } | undefined;
    do {
      row = await service.runtime.ctx.db.selectFrom('media').select(['bytes', 'mimetype']).where('id', '=', mediaId).executeTakeFirst();
      if (row?.bytes) break;
      await Bun.sleep(100);
    } while (Date.now() < deadline);
    expect(row!.mimetype).toBe('image/gif');
    expect(new Uint8Array(row!.bytes!)).toEqual(bytes);
  });

  test('a tampered, missing or misdirected token is 401 (standard shape)', async () => {
    const { url, mediaId } = await receiveImage();
    const token = new URL(url).searchParams.get('token')!;
    const [payload, mac] = token.split('.') as [string, string];
    const base = `${service.url}/v3/connections/media/${mediaId}/download`;
    const flip = (s: string) => s.slice(0, -2) + (s.at(-2) === 'A' ? 'B' : 'A') + s.at(-1);

    for (const bad of [`${payload}.${flip(mac)}`, `${flip(payload)}.${mac}`, `${payload}.`, 'garbage', `${token}.extra`]) {
      const res = await fetch(`${base}?token=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(401);
      expectStandardError({ status: res.status, body: await res.json() }, 401, 'Unauthorized');
    }
    expect((await fetch(base)).status).toBe(401);
    // A valid token of one media item does not open another.
    const other = await receiveImage(new Uint8Array([7, 7, 7]));
    const res = await fetch(`${service.url}/v3/connections/media/${other.mediaId}/download?token=${encodeURIComponent(token)}`);
    expect(res.status).toBe(401);
  });

  test('an expired link (older than 7 days) is 401; a 6-day-old one still works', async () => {
    // Spec 8: "Connection media download link | 7 days".
    const { mediaId } = await receiveImage();
    const expired = downloadLink(linkDeps(new Date(Date.now() - 7 * DAY - 60_000)), mediaId);
    expect((await download(expired)).status).toBe(401);
    const recent = downloadLink(linkDeps(new Date(Date.now() - 6 * DAY)), mediaId);
    const ok = await download(recent);
    expect(ok.status).toBe(200);
    expect(ok.bytes).toEqual(PNG);
  });

  test('a link signed with another key is 401', async () => {
    const { mediaId } = await receiveImage();
    const forged = downloadLink({ clock: { now: () => new Date() }, signingKey: new Uint8Array(32).fill(7), publicUrl: service.url }, mediaId);
    expect((await download(forged)).status).toBe(401);
  });
});

describe('upload tickets (spec 5.6: "the signed, single-use ticket id, valid 10 minutes (connection, recipient and media kind are inside it)")', () => {
  const ticket = (body: Record<string, unknown>, apikey = owner.token, connection = connectionId) =>
    service.call('POST', `/v3/connections/${connection}/media/tickets`, { apikey, body });

  test('a ticket: {ticketId, uploadUrl, expiresAt} about 10 minutes ahead', async () => {
    // Spec 8: "Media upload ticket | 10 minutes, single use".
    const before = Date.now();
    const res = await ticket({ to: '+5511955550002', kind: 'image', caption: 'From the ticket' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'ticketId', 'uploadUrl']);
    // Spec 4.3: "POST /v3/connections/media/uploads/{ticketId}".
    expect(res.body.uploadUrl).toBe(`${service.runtime.ctx.config.publicUrl}/v3/connections/media/uploads/${res.body.ticketId}`);
    const expiresAt = Date.parse(res.body.expiresAt);
    expect(expiresAt - before).toBeGreaterThan(9.5 * 60_000);
    expect(expiresAt - Date.now()).toBeLessThan(10.5 * 60_000);
    expect(res.body.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  test('uploading the bytes without apikey: 201, the message is sent (ends SENT) with the new mediaId; a second upload is 409', async () => {
    const { body } = await ticket({ to: '+5511955550002', kind: 'image', caption: 'From the ticket' });
    const uploaded = await postBytes(body.uploadUrl, PNG, 'image/png');
    expect(uploaded.status).toBe(201);
    expect(uploaded.body.mediaId).toMatch(UUID);
    const message = uploaded.body.message;
    expect(message).toMatchObject({ connectionId, direction: 'outbound', kind: 'image', remoteJid: '5511955550002@s.whatsapp.net', status: 'PENDING' });
    expect(message.content.image).toMatchObject({ mediaId: uploaded.body.mediaId, caption: 'From the ticket', mimetype: 'image/png' });
    const done = await settled(message.id);
    expect(done.status).toBe('SENT');
    expect(done.externalId).toBeTruthy();
    const row = await service.runtime.ctx.db.selectFrom('media').select(['bytes', 'origin', 'size']).where('id', '=', uploaded.body.mediaId).executeTakeFirstOrThrow();
    expect(row.origin).toBe('upload');
    expect(row.size).toBe(PNG.length);
    expect(new Uint8Array(row.bytes!)).toEqual(PNG);

    // Single use (spec 8): the same ticket again collides.
    const again = await postBytes(body.uploadUrl, PNG, 'image/png');
    expectStandardError(again, 409, 'Conflict');
    const rows = await service.runtime.ctx.db.selectFrom('messages').select('id').where('connection_id', '=', connectionId).where('kind', '=', 'image').where('sent_by', '=', owner.userId).execute();
    expect(rows.filter((r) => r.id === message.id)).toHaveLength(1);
  });

  test('the same ticket uploaded twice at once: exactly one upload succeeds', async () => {
    const { body } = await ticket({ to: '5511955550003', kind: 'image' });
    const answers = await Promise.all([postBytes(body.uploadUrl, PNG, 'image/png'), postBytes(body.uploadUrl, PNG, 'image/png')]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
  });

  test('an expired ticket is 401', async () => {
    const ctx = service.runtime.ctx;
    const issued = issueUploadTicket(linkDeps(new Date(Date.now() - 11 * 60_000)), {
      workspaceId: owner.workspaceId,
      userId: owner.userId,
      connectionId,
      to: '5511955550002',
      kind: 'image',
    });
    expect(issued.uploadUrl.startsWith(ctx.config.publicUrl)).toBe(true);
    expectStandardError(await postBytes(issued.uploadUrl, PNG, 'image/png'), 401, 'Unauthorized');
    // Issued 9 minutes ago: still valid.
    const fresh = issueUploadTicket(linkDeps(new Date(Date.now() - 9 * 60_000)), { workspaceId: owner.workspaceId, userId: owner.userId, connectionId, to: '5511955550002', kind: 'image' });
    expect((await postBytes(fresh.uploadUrl, PNG, 'image/png')).status).toBe(201);
  });

  test('a forged or altered ticket is 401', async () => {
    const { body } = await ticket({ to: '5511955550002', kind: 'image' });
    const [payload, mac] = body.ticketId.split('.');
    // Changing the recipient inside the ticket breaks its signature.
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const altered = Buffer.from(JSON.stringify({ ...claims, to: '5511900000000' })).toString('base64url');
    expectStandardError(await postBytes(`${service.url}/v3/connections/media/uploads/${altered}.${mac}`, PNG, 'image/png'), 401, 'Unauthorized');
    expectStandardError(await postBytes(`${service.url}/v3/connections/media/uploads/not-a-ticket`, PNG, 'image/png'), 401, 'Unauthorized');
  });

  test('the wrong content type for the kind is 400, and does not use up the ticket', async () => {
    const { body } = await ticket({ to: '5511955550002', kind: 'image' });
    expectStandardError(await postBytes(body.uploadUrl, new TextEncoder().encode('hello'), 'text/plain'), 400, 'Bad Request');
    expectStandardError(await postBytes(body.uploadUrl, PNG, 'application/json'), 400, 'Bad Request');
    expectStandardError(await postBytes(body.uploadUrl, new Uint8Array(), 'image/png'), 400, 'Bad Request');
    expect((await postBytes(body.uploadUrl, PNG, 'image/png')).status).toBe(201);
  });

  test('a sticker ticket takes image/webp only; audio takes audio/*', async () => {
    const sticker = (await ticket({ to: '5511955550002', kind: 'sticker' })).body;
    expectStandardError(await postBytes(sticker.uploadUrl, PNG, 'image/png'), 400, 'Bad Request');
    expect((await postBytes(sticker.uploadUrl, PNG, 'image/webp')).status).toBe(201);
    const audio = (await ticket({ to: '5511955550002', kind: 'audio' })).body;
    expectStandardError(await postBytes(audio.uploadUrl, PNG, 'image/png'), 400, 'Bad Request');
    expect((await postBytes(audio.uploadUrl, PNG, 'audio/ogg')).status).toBe(201);
  });

  test('asking for a ticket: a bad kind or recipient is 400, an unknown connection is coded 404, an Agent is 403', async () => {
    const badKind = await ticket({ to: '5511955550002', kind: 'hologram' });
    expectStandardError(badKind, 400, 'Bad Request');
    expect(Array.isArray(badKind.body.message)).toBe(true);
    expectStandardError(await ticket({ to: 'nobody', kind: 'image' }), 400, 'Bad Request');
    const unknown = await ticket({ to: '5511955550002', kind: 'image' }, owner.token, crypto.randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('CONNECTION_NOT_FOUND');
    // Spec 2.14: "Send messages and campaigns | yes | yes | yes | no".
    const agent = await memberWithToken(service, owner, 'AGENT');
    expectStandardError(await ticket({ to: '5511955550002', kind: 'image' }, agent.token), 403, 'Forbidden');
    expectStandardError(await service.call('POST', `/v3/connections/${connectionId}/media/tickets`, { body: { to: '5511955550002', kind: 'image' } }), 401, 'Unauthorized');
  });
});

describe('API-key upload, then send by mediaId', () => {
  const upload = (bytes: Uint8Array, contentType: string, headers: Record<string, string> = {}, apikey = owner.token) =>
    postBytes(`${service.url}/v3/connections/${connectionId}/media`, bytes, contentType, { apikey, ...headers });

  test('POST …/media with raw bytes → {mediaId}; sending image {mediaId} ends SENT', async () => {
    const up = await upload(PNG, 'image/png', { 'x-file-name': 'chart.png' });
    expect(up.status).toBe(201);
    expect(up.body).toEqual({ mediaId: up.body.mediaId, mimetype: 'image/png', size: PNG.length, fileName: 'chart.png' });
    expect(up.body.mediaId).toMatch(UUID);
    await expectSent({ to: '5511955550004', image: { mediaId: up.body.mediaId, caption: 'chart' } });
  });

  test('a document upload keeps any content type (application/octet-stream too)', async () => {
    const up = await upload(new Uint8Array([1, 2, 3]), 'application/octet-stream');
    expect(up.status).toBe(201);
    await expectSent({ to: '5511955550004', document: { mediaId: up.body.mediaId, fileName: 'blob.bin' } });
  });

  test('uploads without apikey are 401; a JSON or multipart body is 400; an empty one is 400', async () => {
    expectStandardError(await postBytes(`${service.url}/v3/connections/${connectionId}/media`, PNG, 'image/png'), 401, 'Unauthorized');
    expectStandardError(await upload(new TextEncoder().encode('{"a":1}'), 'application/json'), 400, 'Bad Request');
    expectStandardError(await upload(PNG, 'multipart/form-data; boundary=x'), 400, 'Bad Request');
    expectStandardError(await upload(new Uint8Array(), 'image/png'), 400, 'Bad Request');
  });

  test('an unknown mediaId in a send is a clear 404 and nothing is stored', async () => {
    const before = await service.runtime.ctx.db.selectFrom('messages').select('id').where('connection_id', '=', connectionId).execute();
    const missing = crypto.randomUUID();
    const res = await service.call('POST', `/v3/connections/${connectionId}/chats/messages`, {
      apikey: owner.token,
      body: { to: '5511955550004', image: { mediaId: missing } },
    });
    expectStandardError(res, 404, 'Not Found');
    expect(res.body.message).toContain(missing);
    const notUuid = await service.call('POST', `/v3/connections/${connectionId}/chats/messages`, {
      apikey: owner.token,
      body: { to: '5511955550004', image: { mediaId: 'nope' } },
    });
    expect([400, 404]).toContain(notUuid.status);
    const after = await service.runtime.ctx.db.selectFrom('messages').select('id').where('connection_id', '=', connectionId).execute();
    expect(after.length).toBe(before.length);
  });

  test("another workspace's mediaId is not found", async () => {
    const up = await upload(PNG, 'image/png');
    const other = await service.bootstrap({ plan: 'PRO' });
    const conn = await service.call('POST', '/v3/connections', { apikey: other.token, body: { name: 'other' } });
    await service.call('POST', `/v3/connections/${conn.body.id}/connect`, { apikey: other.token });
    const res = await service.call('POST', `/v3/connections/${conn.body.id}/chats/messages`, {
      apikey: other.token,
      body: { to: '5511955550004', image: { mediaId: up.body.mediaId } },
    });
    expectStandardError(res, 404, 'Not Found');
  });
});
