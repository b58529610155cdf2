import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addTransactionCapability, initAuthCreds, makeCacheableSignalKeyStore, proto } from 'baileys';
import { clearAuthState, createKeyCache, hasAuthState, LeaseLostError, usePostgresAuthState } from '../../adapters/drivers/baileys/auth-state.ts';
import { LeaseStore } from '../../adapters/drivers/baileys/lease.ts';
import { secretBox } from '../../adapters/crypto/secret-box.ts';
import { openBaileysTestDb, type BaileysTestDb } from '../fixtures/baileys/support.ts';

let t: BaileysTestDb;
beforeAll(async () => {
  t = await openBaileysTestDb();
});
afterAll(async () => {
  await t.close();
});

describe('Baileys auth state in Postgres', () => {
  test('a new connection starts from fresh credentials and stores nothing until saved', async () => {
    const id = await t.newConnection();
    const { state } = await usePostgresAuthState(t.db, id);
    expect(state.creds.registered).toBe(false);
    expect(Buffer.isBuffer(state.creds.noiseKey.private)).toBe(true);
    expect(await hasAuthState(t.db, id)).toBe(false);
  });

  test('credentials round-trip with their Buffers', async () => {
    const id = await t.newConnection();
    const first = await usePostgresAuthState(t.db, id);
    // What pairing writes: the account, the identity, a routing blob.
    Object.assign(first.state.creds, {
      me: { id: '5511912345678:12@s.whatsapp.net', lid: '218741234567890:12@lid', name: 'Loja' },
      registered: true,
      routingInfo: Buffer.from([8, 8, 8, 2]),
      account: { details: Buffer.from('details'), accountSignatureKey: Buffer.alloc(32, 7), accountSignature: Buffer.alloc(64, 1), deviceSignature: Buffer.alloc(64, 2) },
    });
    await first.saveCreds();
    expect(await hasAuthState(t.db, id)).toBe(true);

    const again = await usePostgresAuthState(t.db, id);
    const creds = again.state.creds;
    expect(creds.registered).toBe(true);
    expect(creds.me).toEqual({ id: '5511912345678:12@s.whatsapp.net', lid: '218741234567890:12@lid', name: 'Loja' });
    expect(Buffer.isBuffer(creds.noiseKey.private)).toBe(true);
    expect(Buffer.from(creds.noiseKey.private).equals(Buffer.from(first.state.creds.noiseKey.private))).toBe(true);
    expect(Buffer.from(creds.signedPreKey.signature).equals(Buffer.from(first.state.creds.signedPreKey.signature))).toBe(true);
    expect(Buffer.isBuffer(creds.routingInfo)).toBe(true);
    expect([...creds.routingInfo!]).toEqual([8, 8, 8, 2]);
    expect(Buffer.isBuffer(creds.account!.accountSignatureKey)).toBe(true);
    expect(creds.registrationId).toBe(first.state.creds.registrationId);
    expect(creds.advSecretKey).toBe(first.state.creds.advSecretKey);
  });

  test('saves are serialized: the last one wins', async () => {
    const id = await t.newConnection();
    const auth = await usePostgresAuthState(t.db, id);
    const saves: Promise<void>[] = [];
    for (let i = 1; i <= 5; i++) {
      auth.state.creds.nextPreKeyId = i;
      saves.push(auth.saveCreds());
    }
    await Promise.all(saves);
    expect((await usePostgresAuthState(t.db, id)).state.creds.nextPreKeyId).toBe(5);
  });

  test('keys round-trip by type and id; missing ids are absent', async () => {
    const id = await t.newConnection();
    const { state } = await usePostgresAuthState(t.db, id);
    const preKey = { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) };
    const session = Buffer.from('serialized signal session');
    await state.keys.set({
      'pre-key': { '1': preKey, '2': { public: Buffer.alloc(32, 3), private: Buffer.alloc(32, 4) } },
      session: { '5511987654321.0': session },
      'sender-key-memory': { '120363025246125486@g.us': { '5511987654321:0@s.whatsapp.net': true } },
      'lid-mapping': { '5511987654321': '218741234567890' },
      'device-list': { '5511987654321': ['0', '12'] },
      'app-state-sync-key': { AAAAAF3s: { keyData: Buffer.alloc(32, 9), fingerprint: { rawId: 1, currentIndex: 2, deviceIndexes: [0, 1] }, timestamp: 1735732800 } },
    });

    const reopened = (await usePostgresAuthState(t.db, id)).state;
    const preKeys = await reopened.keys.get('pre-key', ['1', '2', '3']);
    expect(Object.keys(preKeys).sort()).toEqual(['1', '2']);
    expect(Buffer.isBuffer(preKeys['1']!.public)).toBe(true);
    expect(Buffer.from(preKeys['1']!.private).equals(preKey.private)).toBe(true);
    expect(Buffer.from((await reopened.keys.get('session', ['5511987654321.0']))['5511987654321.0']!).equals(session)).toBe(true);
    expect(await reopened.keys.get('sender-key-memory', ['120363025246125486@g.us'])).toEqual({ '120363025246125486@g.us': { '5511987654321:0@s.whatsapp.net': true } });
    expect(await reopened.keys.get('lid-mapping', ['5511987654321'])).toEqual({ '5511987654321': '218741234567890' });
    expect(await reopened.keys.get('device-list', ['5511987654321'])).toEqual({ '5511987654321': ['0', '12'] });
    const syncKey = (await reopened.keys.get('app-state-sync-key', ['AAAAAF3s'])).AAAAAF3s!;
    expect(syncKey).toBeInstanceOf(proto.Message.AppStateSyncKeyData);
    expect(Buffer.from(syncKey.keyData!).equals(Buffer.alloc(32, 9))).toBe(true);
    expect(await reopened.keys.get('pre-key', [])).toEqual({});
  });

  test('keys.set with null deletes, in the same transaction as the writes', async () => {
    const id = await t.newConnection();
    const { state } = await usePostgresAuthState(t.db, id);
    await state.keys.set({ 'pre-key': { '1': { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) }, '2': { public: Buffer.alloc(32, 3), private: Buffer.alloc(32, 4) } } });
    await state.keys.set({ 'pre-key': { '1': null, '3': { public: Buffer.alloc(32, 5), private: Buffer.alloc(32, 6) } } });
    expect(Object.keys(await state.keys.get('pre-key', ['1', '2', '3'])).sort()).toEqual(['2', '3']);
  });

  test('a failing keys.set leaves nothing half-written', async () => {
    const id = await t.newConnection();
    const { state } = await usePostgresAuthState(t.db, id);
    await state.keys.set({ 'pre-key': { '1': { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) } } });
    // 500 good keys go out in a first statement; the second statement fails (Postgres text cannot hold NUL).
    const batch: Record<string, { public: Buffer; private: Buffer } | null> = { '1': null };
    for (let i = 100; i < 600; i++) batch[String(i)] = { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) };
    batch['bad\u0000id'] = { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) };
    await expect(state.keys.set({ 'pre-key': batch })).rejects.toThrow();
    expect(Object.keys(await state.keys.get('pre-key', ['1', '100', '599']))).toEqual(['1']);
  });

  test('many keys at once (more than one statement)', async () => {
    const id = await t.newConnection();
    const { state } = await usePostgresAuthState(t.db, id);
    const batch: Record<string, { public: Buffer; private: Buffer }> = {};
    for (let i = 1; i <= 1200; i++) batch[String(i)] = { public: Buffer.alloc(32, i % 256), private: Buffer.alloc(32, (i + 1) % 256) };
    await state.keys.set({ 'pre-key': batch });
    const ids = Object.keys(batch);
    const found = await state.keys.get('pre-key', ids);
    expect(Object.keys(found)).toHaveLength(1200);
    expect(Buffer.from(found['1200']!.public).equals(batch['1200']!.public)).toBe(true);
    await state.keys.set({ 'pre-key': Object.fromEntries(ids.map((k) => [k, null])) });
    expect(await state.keys.get('pre-key', ids)).toEqual({});
  });

  test('connections do not see each other’s keys; clearAuthState removes all of one', async () => {
    const a = await t.newConnection();
    const b = await t.newConnection();
    const authA = await usePostgresAuthState(t.db, a);
    const authB = await usePostgresAuthState(t.db, b);
    await authA.saveCreds();
    await authB.saveCreds();
    await authA.state.keys.set({ session: { x: Buffer.from('a') }, 'pre-key': { '1': { public: Buffer.alloc(32), private: Buffer.alloc(32) } } });
    await authB.state.keys.set({ session: { x: Buffer.from('b') } });
    expect(Buffer.from((await authB.state.keys.get('session', ['x'])).x!).toString()).toBe('b');

    await clearAuthState(t.db, a);
    expect(await hasAuthState(t.db, a)).toBe(false);
    expect(await t.db.selectFrom('baileys_auth').select('key_id').where('connection_id', '=', a).execute()).toEqual([]);
    const fresh = await usePostgresAuthState(t.db, a);
    expect(fresh.state.creds.registered).toBe(false);
    expect(fresh.state.creds.advSecretKey).not.toBe(authA.state.creds.advSecretKey);
    // The other connection keeps its pairing.
    expect(await hasAuthState(t.db, b)).toBe(true);
    expect(Buffer.from((await authB.state.keys.get('session', ['x'])).x!).toString()).toBe('b');
  });

  test('deleting the connection deletes its auth state', async () => {
    const id = await t.newConnection();
    const auth = await usePostgresAuthState(t.db, id);
    await auth.saveCreds();
    await t.db.deleteFrom('connections').where('id', '=', id).execute();
    expect(await hasAuthState(t.db, id)).toBe(false);
  });

  test('with a fence, a worker that lost the lease can no longer write', async () => {
    const id = await t.newConnection();
    const leases = new LeaseStore(t.db);
    expect(await leases.acquire(id, 'worker-a', 30_000)).toBe(true);
    const auth = await usePostgresAuthState(t.db, id, { fence: { owner: 'worker-a' } });
    await auth.saveCreds();
    await auth.state.keys.set({ session: { s: Buffer.from('1') } });

    await leases.revoke(id, 'disconnect');
    expect(await leases.acquire(id, 'worker-b', 30_000)).toBe(true);
    await expect(auth.saveCreds()).rejects.toBeInstanceOf(LeaseLostError);
    await expect(auth.state.keys.set({ session: { s: Buffer.from('2') } })).rejects.toBeInstanceOf(LeaseLostError);
    expect(Buffer.from((await auth.state.keys.get('session', ['s'])).s!).toString()).toBe('1');
    // Unfenced reads still work, and initAuthCreds stays the library's.
    expect(typeof initAuthCreds().advSecretKey).toBe('string');
  });

  test('with the service\'s box (SECRET_KEY), a database copy holds no key of the linked device in clear (issue 19, section 4)', async () => {
    const box = secretBox(crypto.getRandomValues(new Uint8Array(32)));
    const id = await t.newConnection();
    const auth = await usePostgresAuthState(t.db, id, { box });
    await auth.saveCreds();
    await auth.state.keys.set({ session: { '5511987654321.0': Buffer.from('session secret') }, 'pre-key': { '1': { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) } } });

    const rows = await t.db.selectFrom('baileys_auth').select('value').where('connection_id', '=', id).execute();
    expect(rows).toHaveLength(3);
    const noiseKey = Buffer.from(auth.state.creds.noiseKey.private).toString('base64');
    for (const { value } of rows) {
      expect(value.startsWith('v1.')).toBe(true);
      expect(value).not.toContain(noiseKey);
      expect(value).not.toContain(Buffer.from('session secret').toString('base64'));
    }

    const again = await usePostgresAuthState(t.db, id, { box });
    expect(Buffer.from(again.state.creds.noiseKey.private).toString('base64')).toBe(noiseKey);
    expect(Buffer.from((await again.state.keys.get('session', ['5511987654321.0']))['5511987654321.0']!).toString()).toBe('session secret');
  });

  test('values stored in clear before sealing are read, and sealed when the session next opens', async () => {
    const box = secretBox(crypto.getRandomValues(new Uint8Array(32)));
    const id = await t.newConnection();
    const before = await usePostgresAuthState(t.db, id);
    await before.saveCreds();
    await before.state.keys.set({ session: { s: Buffer.from('kept') } });

    const after = await usePostgresAuthState(t.db, id, { box });
    expect(after.state.creds.advSecretKey).toBe(before.state.creds.advSecretKey);
    expect(Buffer.from((await after.state.keys.get('session', ['s'])).s!).toString()).toBe('kept');
    const rows = await t.db.selectFrom('baileys_auth').select('value').where('connection_id', '=', id).execute();
    expect(rows.map((r) => r.value.startsWith('v1.'))).toEqual([true, true]);
  });

  test('works under the layers the socket puts on it (key cache, transactions)', async () => {
    const id = await t.newConnection();
    const { state } = await usePostgresAuthState(t.db, id);
    const silent = { level: 'silent', child: () => silent, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
    const keys = addTransactionCapability(makeCacheableSignalKeyStore(state.keys, silent, createKeyCache()), silent, { maxCommitRetries: 2, delayBetweenTriesMs: 1 });
    await keys.transaction(async () => {
      await keys.set({ session: { '5511987654321.0': Buffer.from('s1') }, 'pre-key': { '7': { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) } } });
      // Inside the transaction the write is visible to reads, not yet in the database.
      expect(Buffer.from((await keys.get('session', ['5511987654321.0']))['5511987654321.0']!).toString()).toBe('s1');
      expect(await (await usePostgresAuthState(t.db, id)).state.keys.get('session', ['5511987654321.0'])).toEqual({});
    }, 'test');
    const fresh = (await usePostgresAuthState(t.db, id)).state.keys;
    expect(Buffer.from((await fresh.get('session', ['5511987654321.0']))['5511987654321.0']!).toString()).toBe('s1');
    expect(Object.keys(await fresh.get('pre-key', ['7']))).toEqual(['7']);
  });

  test('the key cache forgets entries after its TTL and on flush', () => {
    let now = 0;
    const cache = createKeyCache(1_000, () => now);
    cache.set('session.a', Buffer.from('a'));
    cache.set('pre-key.1', null);
    expect(cache.get<Buffer>('session.a')!.toString()).toBe('a');
    expect(cache.get('pre-key.1')).toBeNull(); // a deletion is cached as null, not as a miss
    now = 999;
    expect(cache.get('session.a')).toBeDefined();
    now = 1_000;
    expect(cache.get('session.a')).toBeUndefined();
    cache.set('session.b', 1);
    cache.flushAll();
    expect(cache.get('session.b')).toBeUndefined();
  });
});
