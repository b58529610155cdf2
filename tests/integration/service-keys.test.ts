import { afterAll, afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../apps/config.ts';
import { startService, type RunningService } from '../../apps/server/server.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { passwordSetupToken, setPassword } from '../../core/identity/passwords.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { freshDatabase, onPostgres } from '../support/service.ts';
import { HOOK_TIMEOUT, uniqueEmail } from './helpers.ts';

/**
 * Issue 19, section 4: "With `SECRET_KEY` set, no key that signs links or tokens is usable from a
 * database copy alone. Today `service_keys.signing` plus `users.password_hash` from a read-only
 * database copy forged a password set-up link and took over the Owner."
 *
 * The password set-up link stands for every signed link and ticket: they all use the one
 * signing key (`ctx.keys.signing`).
 */

const SECRET_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');

/** One database for the whole file's services: a fresh Postgres database, or an embedded one on disk (it must outlive a restart). */
let database: { env: Record<string, string>; drop(): Promise<void> } | undefined;
const running: RunningService[] = [];

async function theDatabase() {
  if (database) return database;
  if (onPostgres) {
    const fresh = await freshDatabase(process.env.TEST_DATABASE_URL!);
    database = { env: { DATABASE_URL: fresh.url }, drop: fresh.drop };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'sb-keys-'));
    database = { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  return database;
}

async function start(env: Record<string, string> = {}): Promise<RunningService> {
  const service = await startService(loadConfig({ PORT: '0', ...(await theDatabase()).env, ...env }), { worker: false });
  running.push(service);
  return service;
}

async function stop(service: RunningService): Promise<void> {
  running.splice(running.indexOf(service), 1);
  await service.stop();
}

afterEach(async () => {
  for (const service of running.splice(0)) await service.stop();
}, HOOK_TIMEOUT);

afterAll(async () => {
  await database?.drop();
}, HOOK_TIMEOUT);

/** What the set-up page answers for a token: 200 with the form, 400 "Link expired" when the link is no good. */
async function openLink(service: RunningService, token: string): Promise<number> {
  const response = await fetch(`${service.url}/account/password?token=${encodeURIComponent(token)}`);
  await response.text();
  return response.status;
}

/** The signing keys a read-only copy of the database holds. */
async function storedSigningKeys(service: RunningService): Promise<Uint8Array[]> {
  const rows = await service.runtime.ctx.db.selectFrom('service_keys').select('secret').where('name', '=', 'signing').execute();
  return rows.map((r) => new Uint8Array(Buffer.from(r.secret, 'base64')));
}

describe('signing keys and SECRET_KEY (issue 19, section 4)', () => {
  test('with SECRET_KEY set, a password set-up link forged from service_keys.signing and users.password_hash is refused; the service\'s own links work', async () => {
    // A service that ran before SECRET_KEY was set: its stored signing key is in every backup taken then.
    const before = await start();
    const owner = await before.runtime.ctx.db
      .transaction()
      .execute((trx) => bootstrapOwner(baseStores(trx), before.runtime.ctx, { email: uniqueEmail('owner'), workspace: 'Keys', plan: 'FREE' }));
    await setPassword(baseStores(before.runtime.ctx.db), passwordHasher, owner.userId, 'the owner password 1');
    const backupKeys = await storedSigningKeys(before);
    expect(backupKeys).toHaveLength(1);
    // Issued before the upgrade, signed with the stored key: short-lived links of the old key die with it.
    const issuedBefore = passwordSetupToken({ clock: before.runtime.ctx.clock, signingKey: before.runtime.ctx.keys.signing }, owner.userId, null);
    await stop(before);

    const service = await start({ SECRET_KEY });
    // The attacker's read-only copy, taken now, plus the old backup.
    const { password_hash } = await service.runtime.ctx.db.selectFrom('users').select('password_hash').where('id', '=', owner.userId).executeTakeFirstOrThrow();
    const candidates = [...backupKeys, ...(await storedSigningKeys(service))];
    for (const signingKey of candidates) {
      const forged = passwordSetupToken({ clock: service.runtime.ctx.clock, signingKey }, owner.userId, password_hash);
      expect(await openLink(service, forged)).toBe(400);
    }
    expect(await openLink(service, issuedBefore)).toBe(400);

    // The running service's own link for the same person still opens the form.
    const genuine = passwordSetupToken({ clock: service.runtime.ctx.clock, signingKey: service.runtime.ctx.keys.signing }, owner.userId, password_hash);
    expect(await openLink(service, genuine)).toBe(200);
  }, HOOK_TIMEOUT);

  test('two processes with the same SECRET_KEY over one database accept each other\'s links (after a restart on the embedded database)', async () => {
    const first = await start({ SECRET_KEY });
    const owner = await first.runtime.ctx.db
      .transaction()
      .execute((trx) => bootstrapOwner(baseStores(trx), first.runtime.ctx, { email: uniqueEmail('owner'), workspace: 'Two', plan: 'FREE' }));
    const link = passwordSetupToken({ clock: first.runtime.ctx.clock, signingKey: first.runtime.ctx.keys.signing }, owner.userId, null);
    // The embedded database is one process: the second one is the same service started again.
    if (!onPostgres) await stop(first);
    const second = await start({ SECRET_KEY });
    expect(await openLink(second, link)).toBe(200);
    const back = passwordSetupToken({ clock: second.runtime.ctx.clock, signingKey: second.runtime.ctx.keys.signing }, owner.userId, null);
    if (onPostgres) expect(await openLink(first, back)).toBe(200);

    // Another SECRET_KEY is another signing key.
    const otherKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');
    await stop(second);
    if (onPostgres) await stop(first);
    const stranger = await start({ SECRET_KEY: otherKey });
    expect(await openLink(stranger, link)).toBe(400);
  }, HOOK_TIMEOUT);
});
