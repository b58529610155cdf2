import { beforeAll, describe, expect, test } from 'bun:test';
import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import { BufferJSON, initAuthCreds } from 'baileys';
import { createBaileysDriver, type BaileysSocket, type BaileysSocketConfig } from '../../adapters/drivers/baileys/index.ts';
import { createSandboxDriver } from '../../adapters/drivers/sandbox/index.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import { signToken } from '../../core/shared/signed-token.ts';
import { useTestService } from '../support/service.ts';
import { waitUntil } from '../support/wait.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * The sync flow. Spec 4.3: "POST | `/v3/connections/sync-session/complete` and
 * `/reconnect-complete` | sync flow; bearer is a signed sync token | body not shown". Spec 5.6:
 * "sync-session complete and reconnect-complete | signed sync token in `Authorization: Bearer`";
 * "Format of the signed sync token …: not shown". Issue 20 item 3: the token is signed,
 * short-lived, single-use and bound to one connection; the companion hands over the account's
 * multi-device session material, sealed at rest; `reconnect-complete` re-pairs.
 */
let other: { userId: string; workspaceId: string; token: string };
const IMPORTED = '4915112345678';
const sockets: FakeSocket[] = [];

/** What Baileys would have exported for a paired device of `number` (creds.json + some keys). */
function sessionMaterial(number = IMPORTED) {
  const creds = initAuthCreds();
  const paired = {
    ...creds,
    me: { id: `${number}:7@s.whatsapp.net`, name: 'Imported account' },
    account: { details: Buffer.from('adv-details'), accountSignatureKey: Buffer.alloc(32, 1), accountSignature: Buffer.alloc(64, 2), deviceSignature: Buffer.alloc(64, 3) },
    registered: true,
  };
  const keys = {
    'pre-key': { '1': { private: Buffer.alloc(32, 4), public: Buffer.alloc(32, 5) } },
    session: { [`${number}.0`]: Buffer.from('signal-session-record') },
    'sender-key': { '120363000000000000@g.us::491700000000::0': Buffer.from('sender-key-record') },
  };
  return JSON.parse(JSON.stringify({ creds: paired, keys }, BufferJSON.replacer));
}

/** Stands in for the network behind a Baileys socket: the session opens as the account whose creds it was given. */
class FakeSocket implements BaileysSocket {
  readonly ev = new EventEmitter();
  user: { id: string } | undefined;
  constructor(readonly config: BaileysSocketConfig) {
    setTimeout(() => {
      const me = config.auth.creds.me?.id;
      if (!me) return this.ev.emit('connection.update', { qr: 'QR-FOR-A-NEW-DEVICE' });
      this.user = { id: me };
      this.ev.emit('connection.update', { connection: 'open' });
    }, 0);
  }
  async sendMessage(): Promise<undefined> {
    return undefined;
  }
  async sendPresenceUpdate() {}
  async requestPairingCode() {
    return 'CODE';
  }
  async logout() {}
  end() {}
}

async function createConnection(apikey: string, driver = 'sandbox'): Promise<string> {
  const res = await service.call('POST', '/v3/connections', { apikey, body: { name: `line ${driver}`, driver } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function syncToken(apikey: string, connectionId: string): Promise<string> {
  const res = await service.call('POST', `/v3/connections/${connectionId}/sync-session`, { apikey });
  expect(res.status).toBe(201);
  return res.body.syncToken;
}

function complete(token: string | undefined, body: unknown, path: 'complete' | 'reconnect-complete' = 'complete') {
  return service.call('POST', `/v3/connections/sync-session/${path}`, { body, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

async function connection(apikey: string, id: string) {
  return (await service.call('GET', `/v3/connections/${id}`, { apikey })).body;
}

const eventually = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => waitUntil(read, done, { timeout: 10_000 });

const service = useTestService();

beforeAll(async () => {
  other = await service.bootstrap({ plan: 'PRO' });
  const ctx = service.runtime.ctx;
  const drivers = ctx.drivers as Map<string, NetworkDriver>;
  // The real Baileys driver, whose socket cannot reach the network from here: a stand-in socket.
  await drivers.get('baileys')?.shutdown?.();
  drivers.set(
    'baileys',
    createBaileysDriver({
      db: ctx.db,
      box: ctx.box,
      owner: 'sync-session-test',
      socketFactory: (config) => {
        const socket = new FakeSocket(config);
        sockets.push(socket);
        return socket;
      },
      onError: () => {},
    }),
  );
  // A driver without session import (as the official one): the sandbox minus the import.
  drivers.set('no-import', { ...createSandboxDriver(), name: 'no-import', sessionImport: undefined });
}, HOOK_TIMEOUT);

describe('completing a pairing with a sync token', () => {
  test('request a token → complete → the connection is CONNECTED as the imported account; the token is single-use', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token);
    const issued = await service.call('POST', `/v3/connections/${id}/sync-session`, { apikey: owner.token });
    // Spec 7.1: "201 | Created; default for POST".
    expect(issued.status).toBe(201);
    expect(issued.body.connectionId).toBe(id);
    expect(issued.body.completeUrl).toEndWith('/v3/connections/sync-session/complete');
    expect(issued.body.reconnectCompleteUrl).toEndWith('/v3/connections/sync-session/reconnect-complete');
    const expiresIn = Date.parse(issued.body.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(9 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(10 * 60_000);

    const done = await complete(issued.body.syncToken, sessionMaterial());
    expect(done.status).toBe(201);
    expect(done.body.id).toBe(id);
    const after = await eventually(() => connection(owner.token, id), (c) => c.status === 'CONNECTED');
    expect(after.status).toBe('CONNECTED');
    expect(after.phoneNumber).toBe(IMPORTED);

    // Replayed: refused, and nothing changes.
    const replay = await complete(issued.body.syncToken, sessionMaterial('4915199999999'));
    expectStandardError(replay, 409, 'Conflict');
    expect((await connection(owner.token, id)).phoneNumber).toBe(IMPORTED);
  });

  test('two completions racing with one token: exactly one succeeds, the other is 409', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token);
    const token = await syncToken(owner.token, id);
    const answers = await Promise.all([complete(token, sessionMaterial()), complete(token, sessionMaterial('4915155555555'))]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    const winner = answers.find((a) => a.status === 201)!;
    expect((await eventually(() => connection(owner.token, id), (c) => c.status === 'CONNECTED')).phoneNumber).toBe(winner.body.phoneNumber);
  });

  test('no token, a forged or tampered token, an expired one: 401 with a bearer challenge', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token);
    const missing = await complete(undefined, sessionMaterial());
    expectStandardError(missing, 401, 'Unauthorized');
    expect(missing.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const token = await syncToken(owner.token, id);
    const [payload, mac] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const tampered = `${Buffer.from(JSON.stringify({ ...claims, connectionId: crypto.randomUUID() })).toString('base64url')}.${mac}`;
    expectStandardError(await complete(tampered, sessionMaterial()), 401, 'Unauthorized');
    expectStandardError(await complete('not-a-token', sessionMaterial()), 401, 'Unauthorized');

    // Signed with the service's own key, but its ten minutes are over.
    const expired = signToken(service.runtime.ctx.keys.signing, { ...claims, exp: Math.floor(Date.now() / 1000) - 1 });
    expectStandardError(await complete(expired, sessionMaterial()), 401, 'Unauthorized');
    // A media download token is not a sync token.
    const otherUse = signToken(service.runtime.ctx.keys.signing, { ...claims, use: 'media-download' });
    expectStandardError(await complete(otherUse, sessionMaterial()), 401, 'Unauthorized');
    expect((await connection(owner.token, id)).status).toBe('DISCONNECTED');
  });

  test('a token is bound to its connection and workspace', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const mine = await createConnection(owner.token);
    const another = await createConnection(owner.token);
    const foreign = await createConnection(other.token);
    // The companion names the connection it means: a token of another connection is refused.
    const res = await complete(await syncToken(owner.token, another), { ...sessionMaterial(), connectionId: mine });
    expectStandardError(res, 403, 'Forbidden');
    // Another workspace's token cannot reach this workspace's connection.
    const crossed = await complete(await syncToken(other.token, foreign), { ...sessionMaterial(), connectionId: mine });
    expectStandardError(crossed, 403, 'Forbidden');
    expect((await connection(owner.token, mine)).status).toBe('DISCONNECTED');
    // And asking for a token of another workspace's connection is a 404.
    const notMine = await service.call('POST', `/v3/connections/${foreign}/sync-session`, { apikey: owner.token });
    expect(notMine.status).toBe(404);
    expect(notMine.body.message).toBe('CONNECTION_NOT_FOUND');
  });

  test('malformed material: 400 listing the problems; the token stays usable', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token);
    const token = await syncToken(owner.token, id);
    const missing = await complete(token, {});
    expectStandardError(missing, 400, 'Bad Request');
    expect(missing.body.message).toContain('body.creds is required (the content of creds.json)');

    const { creds } = sessionMaterial();
    const broken = await complete(token, { creds: { ...creds, noiseKey: 'x', me: undefined }, keys: { 'no-such-type': {} } });
    expectStandardError(broken, 400, 'Bad Request');
    expect(broken.body.message).toEqual(
      expect.arrayContaining([
        expect.stringContaining('body.creds.noiseKey'),
        expect.stringContaining('body.creds.me.id'),
        expect.stringContaining('body.keys.no-such-type'),
      ]),
    );
    // An unpaired device (fresh creds, no account) is not a session to take over.
    const unpaired = await complete(token, JSON.parse(JSON.stringify({ creds: initAuthCreds() }, BufferJSON.replacer)));
    expectStandardError(unpaired, 400, 'Bad Request');
    const notJson = await service.call('POST', '/v3/connections/sync-session/complete', { body: 'creds', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' } });
    expectStandardError(notJson, 400, 'Bad Request');
    expect((await connection(owner.token, id)).status).toBe('DISCONNECTED');

    // Nothing was consumed by the refusals: the same token completes with good material.
    expect((await complete(token, sessionMaterial())).status).toBe(201);
  });

  test('the material is bounded (MAX_MEDIA_BYTES): 413', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token);
    const token = await syncToken(owner.token, id);
    const huge = { ...sessionMaterial(), keys: { session: { big: { type: 'Buffer', data: 'A'.repeat(17 * 1024 * 1024) } } } };
    const res = await complete(token, huge);
    expect(res.status).toBe(413);
  });

  test('the session material of useMultiFileAuthState’s folder (`files`) is taken as is', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token);
    const { creds, keys } = sessionMaterial('4915122222222');
    const files = { 'creds.json': creds, 'pre-key-1.json': keys['pre-key']['1'], 'session-4915122222222.0.json': keys.session['4915122222222.0'] };
    const res = await complete(await syncToken(owner.token, id), { files });
    expect(res.status).toBe(201);
    expect((await eventually(() => connection(owner.token, id), (c) => c.status === 'CONNECTED')).phoneNumber).toBe('4915122222222');
    const unknown = await complete(await syncToken(owner.token, await createConnection(owner.token)), { files: { ...files, 'notes.txt': 'hello' } });
    expectStandardError(unknown, 400, 'Bad Request');
  });
});

describe('who may, and which connections can', () => {
  test('spec 2.14 "Connections … | no" for an Agent: no sync token (403); an Admin may', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token);
    const agent = await memberWithToken(service, owner, 'AGENT');
    const refused = await service.call('POST', `/v3/connections/${id}/sync-session`, { apikey: agent.token });
    expectStandardError(refused, 403, 'Forbidden');
    const admin = await memberWithToken(service, owner, 'ADMIN');
    expect((await service.call('POST', `/v3/connections/${id}/sync-session`, { apikey: admin.token })).status).toBe(201);
  });

  test('a token whose member has since lost the capability is refused (403)', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token);
    const manager = await memberWithToken(service, owner, 'MANAGER');
    const token = await syncToken(manager.token, id);
    const demoted = await service.call('PATCH', `/v3/members/${manager.userId}`, { apikey: owner.token, body: { roles: ['AGENT'] } });
    expect(demoted.status).toBe(200);
    expectStandardError(await complete(token, sessionMaterial()), 403, 'Forbidden');
    expect((await connection(owner.token, id)).status).toBe('DISCONNECTED');
  });

  test('a driver that cannot take over a session answers 422, for the token and for the completion', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const id = await createConnection(owner.token, 'no-import');
    const refused = await service.call('POST', `/v3/connections/${id}/sync-session`, { apikey: owner.token });
    expectStandardError(refused, 422, 'Unprocessable Entity');
    expect(refused.body.message).toContain('cannot take over a session');
    // A token made for it anyway (signed with the service's key) meets the same refusal.
    const claims = { use: 'sync-session', exp: Math.floor(Date.now() / 1000) + 600, jti: crypto.randomUUID(), connectionId: id, workspaceId: owner.workspaceId, userId: owner.userId };
    const forced = await complete(signToken(service.runtime.ctx.keys.signing, claims), sessionMaterial());
    expectStandardError(forced, 422, 'Unprocessable Entity');
    expect((await connection(owner.token, id)).status).toBe('DISCONNECTED');
  });
});

describe('re-pairing with reconnect-complete', () => {
  test('a logged-out connection comes back with the same number; never-paired, CONNECTED and other numbers are 409', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const fresh = await createConnection(owner.token);
    expectStandardError(await complete(await syncToken(owner.token, fresh), sessionMaterial(), 'reconnect-complete'), 409, 'Conflict');

    const id = await createConnection(owner.token);
    expect((await complete(await syncToken(owner.token, id), sessionMaterial())).status).toBe(201);
    await eventually(() => connection(owner.token, id), (c) => c.status === 'CONNECTED');
    // CONNECTED: its live session uses the current pairing.
    expectStandardError(await complete(await syncToken(owner.token, id), sessionMaterial(), 'reconnect-complete'), 409, 'Conflict');

    expect((await service.call('POST', `/v3/connections/${id}/logout`, { apikey: owner.token })).body.status).toBe('LOGGED_OUT');
    // Paired before: `complete` is for new connections.
    expectStandardError(await complete(await syncToken(owner.token, id), sessionMaterial()), 409, 'Conflict');
    const wrongNumber = await complete(await syncToken(owner.token, id), sessionMaterial('4915133333333'), 'reconnect-complete');
    expectStandardError(wrongNumber, 409, 'Conflict');
    expect(wrongNumber.body.message).toContain('keeps its number');

    const back = await complete(await syncToken(owner.token, id), sessionMaterial(), 'reconnect-complete');
    expect(back.status).toBe(201);
    const after = await eventually(() => connection(owner.token, id), (c) => c.status === 'CONNECTED');
    expect(after.status).toBe('CONNECTED');
    expect(after.phoneNumber).toBe(IMPORTED);
  });
});

describe('on the Baileys driver', () => {
  test('the session opens from the imported auth state, which is sealed at rest', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const number = '4915144444444';
    const id = await createConnection(owner.token, 'baileys');
    const material = sessionMaterial(number);
    const res = await complete(await syncToken(owner.token, id), material);
    expect(res.status).toBe(201);
    const after = await eventually(() => connection(owner.token, id), (c) => c.status === 'CONNECTED');
    expect(after.status).toBe('CONNECTED');
    expect(after.phoneNumber).toBe(number);
    // The socket was started with the imported credentials and keys.
    const socket = sockets.find((s) => s.config.connectionId === id)!;
    expect(socket.config.auth.creds.me?.id).toBe(`${number}:7@s.whatsapp.net`);
    expect(Buffer.from(socket.config.auth.creds.noiseKey.private).toString('base64')).toBe(material.creds.noiseKey.private.data);
    const sessions = await socket.config.auth.keys.get('session', [`${number}.0`]);
    expect(Buffer.from(sessions[`${number}.0`]!).toString()).toBe('signal-session-record');
    const senderKeys = await socket.config.auth.keys.get('sender-key', ['120363000000000000@g.us::491700000000::0']);
    expect(Object.keys(senderKeys)).toHaveLength(1);

    // At rest: every stored value is sealed; neither the keys nor the account are readable.
    const rows: Array<{ kind: string; value: string }> = await (service.runtime.ctx.db as unknown as Kysely<any>).selectFrom('baileys_auth').select(['kind', 'value']).where('connection_id', '=', id).execute();
    expect(rows.map((r) => r.kind).sort()).toEqual(['creds', 'pre-key', 'sender-key', 'session']);
    const stored = rows.map((r) => r.value).join('\n');
    for (const row of rows) expect(row.value.startsWith('v1.')).toBe(true);
    for (const secret of [material.creds.noiseKey.private.data, material.creds.advSecretKey, number, Buffer.from('signal-session-record').toString('base64')]) {
      expect(stored).not.toContain(secret);
    }
  });

  test('a connection waiting for its QR scan takes the imported pairing instead: the QR session is replaced', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const number = '4915166666666';
    const id = await createConnection(owner.token, 'baileys');
    const pairing = await service.call('POST', `/v3/connections/${id}/connect`, { apikey: owner.token });
    expect(pairing.body.status).toBe('QR_PENDING');
    const res = await complete(await syncToken(owner.token, id), sessionMaterial(number));
    expect(res.status).toBe(201);
    const after = await eventually(() => connection(owner.token, id), (c) => c.status === 'CONNECTED');
    expect(after.status).toBe('CONNECTED');
    expect(after.phoneNumber).toBe(number);
    expect(after.qr).toBeNull();
    const mine = sockets.filter((s) => s.config.connectionId === id);
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(mine.at(-1)!.config.auth.creds.me?.id).toBe(`${number}:7@s.whatsapp.net`);
  });
});
