import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { DUMMY_PASSWORD_HASH, setPassword } from '../../core/identity/passwords.ts';
import { hashSecret } from '../../core/tokens/secret.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { cookiesAreSecure, setCookie } from '../../adapters/http/pages/cookies.ts';
import { CONTENT_SECURITY_POLICY, safeReturnPath } from '../../adapters/http/pages/html.ts';
import { SIGN_IN_ATTEMPTS_PER_MINUTE } from '../../adapters/http/pages/sign-in.ts';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { HOOK_TIMEOUT, uniqueEmail } from './helpers.ts';

/**
 * Person sign-in on the service's own pages, in real Chromium against the real service:
 * email + password, a 12-hour session cookie (HttpOnly, SameSite=Lax, Secure), CSRF on every
 * form (login CSRF included), no open redirect through `return_to`, a per-IP rate limit.
 */

const PASSWORD = 'correct horse battery staple';
let service: TestService;
let browser: TestBrowser;
let person: { userId: string; email: string };

beforeAll(async () => {
  [service, browser] = await Promise.all([startTestService(), startBrowser()]);
  const email = uniqueEmail('signer');
  const owner = await service.bootstrap({ email });
  await setPassword(baseStores(service.runtime.ctx.db), passwordHasher, owner.userId, PASSWORD);
  person = { userId: owner.userId, email };
}, HOOK_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
}, HOOK_TIMEOUT);

const SESSION_COOKIE = '__Host-sb_session';

async function sessionCookie(page: Page) {
  return (await page.context().cookies()).find((c) => c.name === SESSION_COOKIE);
}

/** Opens the sign-in page, fills it and submits; answers the status of the POST /signin. */
async function signIn(page: Page, email: string, password: string, returnTo?: string): Promise<number> {
  const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
  await page.goto(`${service.url}/signin${query}`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/signin') && r.request().method() === 'POST'),
    page.click('#sign-in'),
  ]);
  await page.waitForLoadState();
  return response.status();
}

async function sessionRows(userId: string) {
  return service.runtime.ctx.db.selectFrom('web_sessions').selectAll().where('user_id', '=', userId).execute();
}

/** A browser-less client: GET /signin for the form cookie and token, then POST the form. */
async function formSession(): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${service.url}/signin`);
  const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
  const csrf = (await res.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
  return { cookie, csrf };
}

function postSignIn(fields: Record<string, string>, cookie?: string) {
  return fetch(`${service.url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie && { cookie }) },
    body: new URLSearchParams(fields),
  });
}

describe('the pages', () => {
  test('the sign-in page carries the security headers and a form', async () => {
    const res = await fetch(`${service.url}/signin?return_to=/account`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/html');
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).not.toContain('form-action');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.text();
    expect(body).toContain('action="/signin"');
    expect(body).not.toContain('<script');
  });

  test('GET /account without a session redirects to the sign-in page', async () => {
    const res = await fetch(`${service.url}/account`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/signin?return_to=%2Faccount');
  });

  test('the dummy hash for unknown emails has the real hasher’s parameters (same verification time)', async () => {
    const params = (hash: string) => hash.split('$').slice(1, 4).join('$');
    expect(params(DUMMY_PASSWORD_HASH)).toBe(params(await passwordHasher.hash('anything at all')));
    expect(await passwordHasher.verify('anything at all', DUMMY_PASSWORD_HASH)).toBe(false);
  });
});

describe('signing in, in Chromium', () => {
  test('a wrong password shows one generic error, keeps the email, and starts no session', async () => {
    await browser.withPage(async (page) => {
      expect(await signIn(page, person.email, 'not the password at all')).toBe(401);
      expect(await page.textContent('#error')).toContain('Wrong email or password');
      expect(await page.inputValue('#email')).toBe(person.email);
      expect(await page.inputValue('#password')).toBe('');
      expect(await sessionCookie(page)).toBeUndefined();

      // An unknown email reads exactly the same.
      expect(await signIn(page, uniqueEmail('nobody'), PASSWORD)).toBe(401);
      expect(await page.textContent('#error')).toBe('Wrong email or password.');
      expect(await sessionCookie(page)).toBeUndefined();
    });
    expect(await sessionRows(person.userId)).toHaveLength(0);
  });

  test('the right password lands on return_to, signed in', async () => {
    await browser.withPage(async (page) => {
      expect(await signIn(page, person.email.toUpperCase(), PASSWORD, '/account?from=test#top')).toBe(303);
      const url = new URL(page.url());
      expect(url.origin).toBe(service.url);
      expect(`${url.pathname}${url.search}`).toBe('/account?from=test');
      expect(await page.textContent('#signed-in-email')).toBe(person.email);
    });
  });

  for (const evil of ['//evil.example/steal', 'https://evil.example/steal', '/\\evil.example', '/\t/evil.example', 'javascript:alert(1)']) {
    test(`return_to=${JSON.stringify(evil)} lands on /account instead`, async () => {
      await browser.withPage(async (page) => {
        expect(await signIn(page, person.email, PASSWORD, evil)).toBe(303);
        const url = new URL(page.url());
        expect(url.origin).toBe(service.url);
        expect(url.pathname).toBe('/account');
        expect(await page.textContent('#signed-in-email')).toBe(person.email);
      });
    });
  }

  test('the session cookie is HttpOnly, SameSite=Lax, Secure and host-only; only its hash is stored', async () => {
    await browser.withPage(async (page) => {
      expect(await signIn(page, person.email, PASSWORD)).toBe(303);
      const cookie = await sessionCookie(page);
      expect(cookie).toBeDefined();
      expect(cookie!).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: true, path: '/', domain: '127.0.0.1' });
      // 12 hours, give or take the test's own duration.
      expect(cookie!.expires * 1000 - Date.now()).toBeGreaterThan(11.9 * 3600_000);
      expect(cookie!.expires * 1000 - Date.now()).toBeLessThanOrEqual(12 * 3600_000);
      // Scripts on the page cannot read it.
      expect(await page.evaluate(() => document.cookie)).not.toContain('sb_session');
      const row = await service.runtime.ctx.db.selectFrom('web_sessions').selectAll().where('id_hash', '=', hashSecret(cookie!.value)).executeTakeFirst();
      expect(row?.user_id).toBe(person.userId);
      expect(JSON.stringify(await sessionRows(person.userId))).not.toContain(cookie!.value);
    });
  });

  test('signing out ends the session: the cookie goes and the old value no longer works', async () => {
    await browser.withPage(async (page) => {
      expect(await signIn(page, person.email, PASSWORD)).toBe(303);
      const cookie = (await sessionCookie(page))!;
      await Promise.all([page.waitForURL(/\/signin/), page.click('#sign-out')]);
      expect(await sessionCookie(page)).toBeUndefined();
      await page.goto(`${service.url}/account`);
      expect(new URL(page.url()).pathname).toBe('/signin');

      const replay = await fetch(`${service.url}/account`, { redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${cookie.value}` } });
      expect(replay.status).toBe(303);
      const row = await service.runtime.ctx.db.selectFrom('web_sessions').select('id_hash').where('id_hash', '=', hashSecret(cookie.value)).executeTakeFirst();
      expect(row).toBeUndefined();
    });
  });
});

describe('CSRF', () => {
  test('a sign-in POST without the csrf field, or with a wrong one, is 403 and starts no session', async () => {
    const before = (await sessionRows(person.userId)).length;
    const { cookie, csrf } = await formSession();
    const missing = await postSignIn({ email: person.email, password: PASSWORD, return_to: '/account' }, cookie);
    expect(missing.status).toBe(403);
    expect(missing.headers.getSetCookie().join()).not.toContain('sb_session');
    const wrong = await postSignIn({ email: person.email, password: PASSWORD, csrf: `${csrf.slice(0, -2)}xx` }, cookie);
    expect(wrong.status).toBe(403);
    expect(wrong.headers.getSetCookie().join()).not.toContain('sb_session');
    // A token without the browser's form cookie (a cross-site post carries neither) is refused too.
    const noCookie = await postSignIn({ email: person.email, password: PASSWORD, csrf });
    expect(noCookie.status).toBe(403);
    expect((await sessionRows(person.userId)).length).toBe(before);

    // The same request with the right token signs in: the refusals above were the CSRF check.
    const right = await postSignIn({ email: person.email, password: PASSWORD, csrf, return_to: '/account' }, cookie);
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe('/account');
    const setCookie = right.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(setCookie).toBeDefined();
    expect(setCookie.split('; ').slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=43200', 'Path=/', 'SameSite=Lax', 'Secure'].sort());
    expect((await sessionRows(person.userId)).length).toBe(before + 1);
  });

  test('sign-out needs the session’s csrf token', async () => {
    const { cookie, csrf } = await formSession();
    const signedIn = await postSignIn({ email: person.email, password: PASSWORD, csrf }, cookie);
    const session = signedIn.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!.split(';')[0]!;
    const signOut = (fields: Record<string, string>) =>
      fetch(`${service.url}/signout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session },
        body: new URLSearchParams(fields),
      });
    expect((await signOut({})).status).toBe(403);
    expect((await signOut({ csrf })).status).toBe(403); // the pre-sign-in token is not the session's
    const account = await fetch(`${service.url}/account`, { headers: { cookie: session } });
    expect(account.status).toBe(200);
    const sessionCsrf = (await account.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
    const out = await signOut({ csrf: sessionCsrf });
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie().join()).toContain(`${SESSION_COOKIE}=;`);
    expect((await fetch(`${service.url}/account`, { redirect: 'manual', headers: { cookie: session } })).status).toBe(303);
  });
});

describe('session lifetime', () => {
  test('a session is good for 12 hours, then /account sends the person to sign in again', async () => {
    const { cookie, csrf } = await formSession();
    const signedIn = await postSignIn({ email: person.email, password: PASSWORD, csrf }, cookie);
    const session = signedIn.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!.split(';')[0]!;
    const value = session.slice(SESSION_COOKIE.length + 1);
    const row = await service.runtime.ctx.db.selectFrom('web_sessions').selectAll().where('id_hash', '=', hashSecret(value)).executeTakeFirstOrThrow();
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(12 * 3600_000);
    expect((await fetch(`${service.url}/account`, { redirect: 'manual', headers: { cookie: session } })).status).toBe(200);

    await service.runtime.ctx.db.updateTable('web_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('id_hash', '=', row.id_hash).execute();
    const expired = await fetch(`${service.url}/account`, { redirect: 'manual', headers: { cookie: session } });
    expect(expired.status).toBe(303);
    expect(expired.headers.get('location')).toStartWith('/signin');
  });
});

describe('return_to and cookies, as rules', () => {
  test('only same-origin paths starting with a single slash pass', () => {
    expect(safeReturnPath('/v3/oauth/authorize?client_id=a&state=b')).toBe('/v3/oauth/authorize?client_id=a&state=b');
    // Percent-encoded characters stay encoded: a path, not a line break.
    expect(safeReturnPath('/a%0a%5C')).toBe('/a%0a%5C');
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example', 'evil.example', '/\n/evil.example', '/\r\n//evil', ' /account', '', undefined, ['/a', '/b']]) {
      expect(safeReturnPath(bad)).toBe('/account');
    }
  });

  test('cookies are Secure except for plain http on a host that is not loopback', () => {
    expect(cookiesAreSecure('https://switchboard.example')).toBe(true);
    expect(cookiesAreSecure('http://localhost:3000')).toBe(true);
    expect(cookiesAreSecure('http://127.0.0.1:3000')).toBe(true);
    expect(cookiesAreSecure('http://[::1]:3000')).toBe(true);
    expect(cookiesAreSecure('http://switchboard.internal:3000')).toBe(false);
    expect(cookiesAreSecure('http://10.0.0.5')).toBe(false);
    expect(setCookie('http://switchboard.internal', 'sb_session', 'v', 60)).toBe('sb_session=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=60');
    expect(setCookie('https://switchboard.example', 'sb_session', 'v', 60)).toBe('__Host-sb_session=v; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=60');
  });
});

describe('rate limit', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService();
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    await limited?.stop();
  }, HOOK_TIMEOUT);

  test(`after ${SIGN_IN_ATTEMPTS_PER_MINUTE} failures a minute from one IP every attempt is 429, even with the right password; successes do not count`, async () => {
    const email = uniqueEmail('limited');
    const owner = await limited.bootstrap({ email });
    await setPassword(baseStores(limited.runtime.ctx.db), passwordHasher, owner.userId, PASSWORD);
    const page = await fetch(`${limited.url}/signin`);
    const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
    const csrf = (await page.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
    const attempt = (password: string) =>
      fetch(`${limited.url}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ email, password, csrf }),
      });
    for (let i = 0; i < SIGN_IN_ATTEMPTS_PER_MINUTE + 2; i++) expect((await attempt(PASSWORD)).status).toBe(303);
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_ATTEMPTS_PER_MINUTE; i++) statuses.push((await attempt(`wrong password ${i}`)).status);
    expect(statuses).toEqual(Array(SIGN_IN_ATTEMPTS_PER_MINUTE).fill(401));
    const refused = await attempt(PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.getSetCookie().join()).not.toContain('sb_session');
  });
});
