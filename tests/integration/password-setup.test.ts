import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { passwordSetupToken, passwordSetupUrl, setPassword, verifySignIn } from '../../core/identity/passwords.ts';
import { signUp } from '../../core/identity/workspaces.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { useOwner, useTestService } from '../support/service.ts';
import { HOOK_TIMEOUT, uniqueEmail } from './helpers.ts';

/**
 * Password set-up links: the person opens one in a browser, sets a password (10 to 200
 * characters), is signed in, and can sign in again later. The link is signed, valid 7 days, and
 * dies once a password is set. Invitations no longer hand them out (issue 19, section 3: the
 * inviter chose the invitee's password with it); people join through invitations
 * (invitations.test.ts), and these links are minted here by the service's own signing key.
 */

const service = useTestService();
const owner = useOwner(service);
let browser: TestBrowser;

beforeAll(async () => {
  browser = await startBrowser();
}, HOOK_TIMEOUT);

afterAll(async () => {
  await browser?.close();
}, HOOK_TIMEOUT);

/** A person new to the service and a set-up link for them, signed with the service's key. */
async function invite(email = uniqueEmail('invitee')): Promise<{ userId: string; email: string; url: string }> {
  const ctx = service.runtime.ctx;
  const user = await ctx.db.transaction().execute((trx) => signUp(baseStores(trx), ctx, { email }));
  const url = passwordSetupUrl({ clock: ctx.clock, signingKey: ctx.keys.signing, publicUrl: ctx.config.publicUrl }, user.id, null);
  return { userId: user.id, email, url };
}

/** Fills the set-password form on `page` and submits it; answers the status of the POST. */
async function submitPassword(page: Page, password: string, confirmation = password): Promise<number> {
  await page.fill('#password', password);
  await page.fill('#password-confirm', confirmation);
  const [response] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/account/password' && r.request().method() === 'POST'),
    page.click('#set-password'),
  ]);
  await page.waitForLoadState();
  return response.status();
}

async function signInWorks(email: string, password: string): Promise<boolean> {
  return Boolean(await verifySignIn(baseStores(service.runtime.ctx.db), passwordHasher, email, password));
}

async function storedHash(userId: string): Promise<string | null> {
  const row = await service.runtime.ctx.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirstOrThrow();
  return row.password_hash;
}

describe('invitations hand out no set-up link', () => {
  test('POST /v3/members answers no passwordSetupUrl and attaches nobody; the OpenAPI document does not mention it', async () => {
    // Issue 19, section 3: "`POST /v3/members` hands the inviter a `passwordSetupUrl` for a person new to the service."
    const email = uniqueEmail('invitee');
    const res = await service.call('POST', '/v3/members', { apikey: owner.token, body: { email, roles: ['ADMIN'] } });
    expect(res.status).toBe(201);
    expect(res.body.passwordSetupUrl).toBeUndefined();
    expect(res.body.userId).toBeUndefined();
    expect(await service.runtime.ctx.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()).toBeUndefined();
    const doc = await service.call('GET', '/docs/json');
    expect(doc.status).toBe(200);
    expect(JSON.stringify(doc.body.paths['/v3/members'].post)).not.toContain('passwordSetupUrl');
  });
});

describe('setting the password in Chromium', () => {
  test('the link opens the form; the password is set, the person is signed in and can sign in again later', async () => {
    const person = await invite();
    await browser.withPage(async (page) => {
      const opened = await page.goto(person.url);
      expect(opened!.status()).toBe(200);
      expect(opened!.headers()['content-security-policy']).toContain("default-src 'none'");
      expect(await page.textContent('#email')).toBe(person.email);
      expect(await submitPassword(page, 'a long enough secret')).toBe(200);
      expect(await page.textContent('#notice')).toContain('Your password is set');
      const cookies = await page.context().cookies();
      expect(cookies.find((c) => c.name === '__Host-sb_session')).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax' });
      // On to the console (the home page), signed in.
      await page.click('#continue');
      expect(await page.textContent('#signed-in-as')).toBe(person.email);
    });

    // Later, in another browser: the sign-in page with that password.
    await browser.withPage(async (page) => {
      await page.goto(`${service.url}/signin`);
      await page.fill('#email', person.email);
      await page.fill('#password', 'a long enough secret');
      await Promise.all([page.waitForURL(`${service.url}/`), page.click('#sign-in')]);
      expect(await page.textContent('#signed-in-as')).toBe(person.email);
    });
  });

  test('a used link is refused, also from a form opened before it was used', async () => {
    const person = await invite();
    await browser.withPage(async (early) => {
      await early.goto(person.url); // opened, not submitted yet
      await browser.withPage(async (page) => {
        await page.goto(person.url);
        expect(await submitPassword(page, 'the first password')).toBe(200);
      });

      expect(await submitPassword(early, 'a second password')).toBe(400);
      expect(await early.textContent('#error')).toContain('expired or has already been used');
      const reopened = await early.goto(person.url);
      expect(reopened!.status()).toBe(400);
      expect(await early.textContent('#error')).toContain('expired or has already been used');
    });
    expect(await signInWorks(person.email, 'the first password')).toBe(true);
    expect(await signInWorks(person.email, 'a second password')).toBe(false);
  });

  test('an expired or tampered link is refused; one inside its 7 days opens', async () => {
    const person = await invite();
    const ctx = service.runtime.ctx;
    const issuedAgo = (ms: number) => passwordSetupToken({ clock: { now: () => new Date(Date.now() - ms) }, signingKey: ctx.keys.signing }, person.userId, null);
    const day = 86_400_000;
    const link = (token: string) => `${service.url}/account/password?token=${encodeURIComponent(token)}`;
    await browser.withPage(async (page) => {
      expect((await page.goto(link(issuedAgo(7 * day + 60_000))))!.status()).toBe(400);
      expect(await page.textContent('#error')).toContain('expired');
      expect((await page.goto(link(issuedAgo(7 * day - 60_000))))!.status()).toBe(200);

      const good = new URL(person.url).searchParams.get('token')!;
      const [body, mac] = good.split('.');
      const forged = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), exp: 9_999_999_999 })).toString('base64url')}.${mac}`;
      expect((await page.goto(link(forged)))!.status()).toBe(400);
      expect((await page.goto(`${service.url}/account/password`))!.status()).toBe(400);
    });
    expect(await storedHash(person.userId)).toBeNull();
  });

  test('a password shorter than 10 characters shows the rule and sets nothing; so do two that differ', async () => {
    const person = await invite();
    await browser.withPage(async (page) => {
      await page.goto(person.url);
      expect(await submitPassword(page, 'short')).toBe(400);
      expect(await page.textContent('#error')).toContain('password must be at least 10 characters long');
      expect(await page.textContent('#password-rule')).toContain('10 to 200 characters');
      expect(await submitPassword(page, 'long enough one', 'long enough two')).toBe(400);
      expect(await page.textContent('#error')).toContain('do not match');
      expect((await page.context().cookies()).find((c) => c.name === '__Host-sb_session')).toBeUndefined();
      expect(await storedHash(person.userId)).toBeNull();

      // The form still works after the errors.
      expect(await submitPassword(page, 'long enough now')).toBe(200);
    });
    expect(await signInWorks(person.email, 'long enough now')).toBe(true);
  });

  test('a POST without the form’s csrf token is 403 and changes nothing', async () => {
    const person = await invite();
    const token = new URL(person.url).searchParams.get('token')!;
    const res = await fetch(`${service.url}/account/password`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, password: 'attacker chosen pw', password_confirm: 'attacker chosen pw' }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie().join()).not.toContain('sb_session');
    expect(await storedHash(person.userId)).toBeNull();

    // With the browser's form cookie and its token the same post goes through.
    const form = await fetch(`${service.url}/account/password?token=${encodeURIComponent(token)}`);
    const cookie = form.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
    const csrf = (await form.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
    const post = (fields: Record<string, string>) =>
      fetch(`${service.url}/account/password`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ token, password: 'a person chosen pw', password_confirm: 'a person chosen pw', ...fields }),
      });
    expect((await post({ csrf: csrf.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) })).status).toBe(403);
    expect(await storedHash(person.userId)).toBeNull();
    const ok = await post({ csrf });
    expect(ok.status).toBe(200);
    expect(ok.headers.getSetCookie().join()).toContain('__Host-sb_session=');
    expect(await signInWorks(person.email, 'a person chosen pw')).toBe(true);
  });

  test('a person whose password is set another way (CLI) finds the link dead', async () => {
    const person = await invite();
    await setPassword(baseStores(service.runtime.ctx.db), passwordHasher, person.userId, 'set from the cli');
    const res = await fetch(person.url.replace(service.runtime.ctx.config.publicUrl, service.url));
    expect(res.status).toBe(400);
  });
});
