import { beforeAll, describe, expect, test } from 'bun:test';
import { setPassword } from '../../core/identity/passwords.ts';
import { passwordLinkFor, setPasswordWithLink } from '../support/password-page.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { startSession } from '../../adapters/http/web-session.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 19, section 4: "changing a password [...] takes effect". A new password ends every
 * sign-in session of the person (whoever signed in with the old one, or took a session cookie,
 * is out); API tokens are credentials of their own and keep working until revoked.
 */

const service = useTestService();
const owner = useOwner(service);

beforeAll(async () => {
  await setPassword(baseStores(service.runtime.ctx.db), passwordHasher, owner.userId, 'the first password');
}, HOOK_TIMEOUT);

/** A signed-in browser of the owner: the `name=value` of its session cookie. */
async function signedIn(): Promise<string> {
  const { setCookie } = await startSession(service.runtime.ctx, owner.userId);
  return setCookie.split(';')[0]!;
}

/** 200 while the session is live; 303 to the sign-in page once it is not. */
async function accountStatus(cookie: string): Promise<number> {
  const res = await fetch(`${service.url}/account`, { redirect: 'manual', headers: { cookie } });
  await res.text();
  return res.status;
}

/** Sets a new password through the set-up page, as a person with a link does; answers the cookie of the session the page starts. */
async function passwordThroughThePage(password: string): Promise<string> {
  const posted = await setPasswordWithLink(service.url, await passwordLinkFor(service, owner.userId), password);
  await posted.text();
  expect(posted.status).toBe(200);
  const session = posted.headers.getSetCookie().find((c) => c.includes('sb_session='));
  return session!.split(';')[0]!;
}

describe('a password change (issue 19, section 4)', () => {
  test('through the password page: every other sign-in session of the person ends; the new one works; API tokens keep working', async () => {
    const [laptop, phone] = await Promise.all([signedIn(), signedIn()]);
    expect(await accountStatus(laptop)).toBe(200);
    expect(await accountStatus(phone)).toBe(200);

    const fresh = await passwordThroughThePage('the second password');
    expect(await accountStatus(laptop)).toBe(303);
    expect(await accountStatus(phone)).toBe(303);
    expect(await accountStatus(fresh)).toBe(200);
    expect((await service.call('GET', '/v3/api-tokens', { apikey: owner.token })).status).toBe(200);
  });

  test('as the CLI sets it (`set-password`): the sessions end too', async () => {
    const session = await signedIn();
    expect(await accountStatus(session)).toBe(200);
    await service.runtime.ctx.db.transaction().execute((trx) => setPassword(baseStores(trx), passwordHasher, owner.userId, 'the third password'));
    expect(await accountStatus(session)).toBe(303);
  });
});
