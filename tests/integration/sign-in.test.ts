import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { DUMMY_PASSWORD_HASH, setPassword } from '../../core/identity/passwords.ts';
import { hashSecret } from '../../core/tokens/secret.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { cookiesAreSecure, setCookie } from '../../adapters/http/pages/cookies.ts';
import { CONTENT_SECURITY_POLICY, safeReturnPath } from '../../adapters/http/pages/html.ts';
import { SIGN_IN_POLICIES } from '../../adapters/http/auth-failures.ts';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { useTestService } from '../support/service.ts';
import { HOOK_TIMEOUT, uniqueEmail } from './helpers.ts';

/**
 * Person sign-in on the service's own pages, in real Chromium against the real service:
 * email + password, a session cookie (HttpOnly, SameSite=Lax, Secure; 24 hours idle, 14 days at most), CSRF on every
 * form (login CSRF included), no open redirect through `return_to`, a per-IP rate limit.
 */

const PASSWORD = 'correct horse battery staple';
const service = useTestService();
let browser: TestBrowser;
let person: { userId: string; email: string };

beforeAll(async () => {
  browser = await startBrowser();
  const email = uniqueEmail('signer');
  const owner = await service.bootstrap({ email });
  await setPassword(baseStores(service.runtime.ctx.db), passwordHasher, owner.userId, PASSWORD);
  person = { userId: owner.userId, email };
}, HOOK_TIMEOUT);

afterAll(async () => {
  await browser?.close();
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
    test(`return_to=${JSON.stringify(evil)} lands on the console (home) instead`, async () => {
      await browser.withPage(async (page) => {
        expect(await signIn(page, person.email, PASSWORD, evil)).toBe(303);
        const url = new URL(page.url());
        expect(url.origin).toBe(service.url);
        expect(url.pathname).toBe('/');
        expect(await page.textContent('#signed-in-as')).toBe(person.email);
      });
    });
  }

  test('the session cookie is HttpOnly, SameSite=Lax, Secure and host-only; only its hash is stored', async () => {
    await browser.withPage(async (page) => {
      expect(await signIn(page, person.email, PASSWORD)).toBe(303);
      const cookie = await sessionCookie(page);
      expect(cookie).toBeDefined();
      expect(cookie!).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: true, path: '/', domain: '127.0.0.1' });
      // The browser keeps it for the absolute lifetime (14 days, give or take the test's own
      // duration); the idle expiry (24 hours) is the server's to enforce.
      expect(cookie!.expires * 1000 - Date.now()).toBeGreaterThan(14 * 24 * 3600_000 - 600_000);
      expect(cookie!.expires * 1000 - Date.now()).toBeLessThanOrEqual(14 * 24 * 3600_000);
      // Scripts on the page cannot read it.
      expect(await page.evaluate(() => document.cookie)).not.toContain('sb_session');
      const row = await service.runtime.ctx.db.selectFrom('web_sessions').selectAll().where('id_hash', '=', hashSecret(cookie!.value)).executeTakeFirst();
      expect(row?.user_id).toBe(person.userId);
      expect(JSON.stringify(await sessionRows(person.userId))).not.toContain(cookie!.value);
    });
  });

  test('signing out ends the session: the cookie goes and the old value no longer works', async () => {
    await browser.withPage(async (page) => {
      expect(await signIn(page, person.email, PASSWORD, '/account')).toBe(303);
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
    expect(setCookie.split('; ').slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=1209600', 'Path=/', 'SameSite=Lax', 'Secure'].sort());
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
  test('a session ends 24 hours after its last use (14 days at most), then /account sends the person to sign in again', async () => {
    const { cookie, csrf } = await formSession();
    const signedIn = await postSignIn({ email: person.email, password: PASSWORD, csrf }, cookie);
    const session = signedIn.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!.split(';')[0]!;
    const value = session.slice(SESSION_COOKIE.length + 1);
    const row = await service.runtime.ctx.db.selectFrom('web_sessions').selectAll().where('id_hash', '=', hashSecret(value)).executeTakeFirstOrThrow();
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(24 * 3600_000);
    expect(row.absolute_expires_at.getTime() - row.created_at.getTime()).toBe(14 * 24 * 3600_000);
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

describe('issue 19 §5: "Sign-in lockout must not lock the real user out: throttle per account and address with backoff, not a hard block"', () => {
  // A clock that stands still unless a test moves it; TRUST_PROXY=1 lets a test speak from several addresses.
  let now = new Date('2026-03-02T10:00:00Z');
  const limited = useTestService({ env: { TRUST_PROXY: '1' }, clock: { now: () => now } });

  const later = (seconds: number) => (now = new Date(now.getTime() + seconds * 1000));
  async function account(): Promise<string> {
    const email = uniqueEmail('limited');
    const owner = await limited.bootstrap({ email });
    await setPassword(baseStores(limited.runtime.ctx.db), passwordHasher, owner.userId, PASSWORD);
    return email;
  }
  async function attempt(email: string, password: string, address: string) {
    const page = await fetch(`${limited.url}/signin`);
    const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
    const csrf = (await page.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
    return fetch(`${limited.url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, 'x-forwarded-for': address },
      body: new URLSearchParams({ email, password, csrf }),
    });
  }
  const { free } = SIGN_IN_POLICIES.accountFromAddress;
  /** Each attempt checks a password with the real (deliberately slow) hasher. */
  const SLOW = 180_000;

  test(`after ${free} failures on one account from one address the wait doubles with each failure, and the right password works once it is over`, async () => {
    const email = await account();
    for (let i = 0; i < free; i++) expect((await attempt(email, `wrong ${i}`, '198.51.100.10')).status).toBe(401);
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const refused = await attempt(email, PASSWORD, '198.51.100.10');
      expect(refused.status).toBe(429);
      expect(refused.headers.getSetCookie().join()).not.toContain('sb_session');
      waits.push(Number(refused.headers.get('retry-after')));
      later(waits.at(-1)!);
      if (i < 3) expect((await attempt(email, `wrong again ${i}`, '198.51.100.10')).status).toBe(401);
    }
    expect(waits).toEqual([1, 2, 4, 8]);
    // Waiting is all it takes: no hard block.
    expect((await attempt(email, PASSWORD, '198.51.100.10')).status).toBe(303);
    // The success clears this address's count for the account: a typo afterwards is a plain 401.
    expect((await attempt(email, 'typo', '198.51.100.10')).status).toBe(401);
    expect((await attempt(email, PASSWORD, '198.51.100.10')).status).toBe(303);
  }, SLOW);

  test('guessing from many addresses slows the account down, but not for the person at an address they signed in from', async () => {
    const email = await account();
    expect((await attempt(email, PASSWORD, '192.0.2.50')).status).toBe(303); // the person, from home
    later(60);
    const { free: accountFree } = SIGN_IN_POLICIES.account;
    for (let i = 0; i < accountFree; i++) expect((await attempt(email, `guess ${i}`, `203.0.113.${i + 1}`)).status).toBe(401);
    // A new address now waits (the account's own throttle) ...
    const stranger = await attempt(email, PASSWORD, '203.0.113.200');
    expect(stranger.status).toBe(429);
    expect(Number(stranger.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // ... the person at home does not.
    expect((await attempt(email, PASSWORD, '192.0.2.50')).status).toBe(303);
  }, SLOW);

  test('one address guessing across many accounts is slowed down for every account', async () => {
    const { free: addressFree } = SIGN_IN_POLICIES.address;
    // Few guesses per account (under the per-account throttles), many accounts.
    const emails = await Promise.all(Array.from({ length: 8 }, () => account()));
    later(3600);
    for (let i = 0; i < addressFree; i++) expect((await attempt(emails[i % 8]!, `spray ${i}`, '198.51.100.99')).status).toBe(401);
    const other = await account();
    expect((await attempt(other, 'spray', '198.51.100.99')).status).toBe(429);
    // Another address is not affected.
    expect((await attempt(other, PASSWORD, '198.51.100.98')).status).toBe(303);
  }, SLOW);

  test('the counts are kept in the database (every server process sees them)', async () => {
    const rows = await limited.runtime.ctx.db.selectFrom('auth_failures').select(['kind']).distinct().execute();
    expect(rows.map((r) => r.kind).sort()).toEqual(['signin-account', 'signin-account-address', 'signin-address', 'signin-known-address']);
  });
});
