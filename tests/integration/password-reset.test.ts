import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { verifySignIn } from '../../core/identity/passwords.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { startSession } from '../../adapters/http/web-session.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { useBrowser } from '../support/browser.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { answerInvitation, TEST_MEMBER_PASSWORD } from '../support/invitations.ts';
import { type TestService, useOwner, useTestService } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';
import { setPasswordWithLink } from '../support/password-page.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, uniqueEmail } from './helpers.ts';

/**
 * Issue 22, password reset. "Forgot password?" on the sign-in page leads to /forgot-password;
 * with SMTP_URL a one-time link valid one hour is mailed, and the answer is the same whether or
 * not the address has an account. Without mail an Owner or Admin issues the link:
 * POST /v3/members/{userId}/password-reset answers { url, expiresAt }. Either link opens the
 * password set-up page; setting the password kills the link and ends the person's sessions.
 */

let smtp: SmtpReceiver;
/** The mailing service's clock runs this far ahead of the wall clock (to expire links). */
let ahead = 0;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
}, HOOK_TIMEOUT);

const mailing = useTestService(() => ({ env: { SMTP_URL: smtp.url }, clock: { now: () => new Date(Date.now() + ahead) } }));
const mailingOwner = useOwner(mailing);
const service = useTestService();
const owner = useOwner(service);
const browser = useBrowser();

afterAll(async () => {
  await smtp?.close();
}, HOOK_TIMEOUT);

/** Opens a page with a form (as a browser: keeps its form cookie) and posts `fields` with its CSRF token. */
async function submit(base: string, path: string, fields: Record<string, string>, pagePath = path): Promise<Response> {
  const page = await fetch(`${base}${pagePath}`);
  const html = await page.text();
  expect(page.status).toBe(200);
  const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
  const csrf = html.match(/name="csrf" value="([^"]+)"/)![1]!;
  return fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ csrf, ...fields }),
  });
}

async function signInWorks(on: TestService, email: string, password: string): Promise<boolean> {
  return Boolean(await verifySignIn(baseStores(on.runtime.ctx.db), passwordHasher, email, password));
}

/** 200 while the session cookie is live; 303 once it is not. */
async function accountStatus(on: TestService, cookie: string): Promise<number> {
  const res = await fetch(`${on.url}/account`, { redirect: 'manual', headers: { cookie } });
  await res.text();
  return res.status;
}

/** An Agent who joined the mailing service's workspace by a mailed invitation, with TEST_MEMBER_PASSWORD. */
async function mailedMember(): Promise<{ userId: string; email: string }> {
  const email = uniqueEmail('agent');
  const invited = await mailing.call('POST', '/v3/members', { apikey: mailingOwner.token, body: { email, roles: ['AGENT'] } });
  expect(invited.status).toBe(201);
  const url = (await smtp.next(email)).text.match(/(https?:\/\/\S+\/invitations\/accept\?token=\S+)/)![1]!;
  expect((await answerInvitation(mailing.url, url, { password: TEST_MEMBER_PASSWORD })).status).toBe(200);
  const listed = await mailing.call('GET', `/v3/members?per_page=100&s=${encodeURIComponent(email)}`, { apikey: mailingOwner.token });
  return { userId: listed.body.data.find((m: { email: string }) => m.email === email).userId, email };
}

/** The password reset mail to `email`, once it has arrived. */
function resetMail(email: string) {
  return waitFor(() => smtp.messages.find((m) => m.to.includes(email) && m.headers.subject?.includes('Reset your Switchboard password')), { what: `the reset mail to ${email}` });
}

function linkIn(text: string): string {
  return text.match(/(https?:\/\/\S+\/account\/password\?token=\S+)/)![1]!;
}

describe('Forgot password? with mail', () => {
  test('the sign-in page links to it; a mailed link sets a new password once, ends the sessions and signs in', async () => {
    const person = await mailedMember();
    const signInPage = await (await fetch(`${mailing.url}/signin`)).text();
    expect(signInPage).toContain('href="/forgot-password"');
    const { setCookie } = await startSession(mailing.runtime.ctx, person.userId);
    const oldSession = setCookie.split(';')[0]!;
    expect(await accountStatus(mailing, oldSession)).toBe(200);

    const asked = await submit(mailing.url, '/forgot-password', { email: person.email.toUpperCase() });
    expect(asked.status).toBe(200);
    const answer = await asked.text();
    expect(answer).toContain('Check your mail');
    const mail = await resetMail(person.email);
    expect(mail.headers.subject).toContain('Reset your Switchboard password');
    const url = linkIn(mail.text);
    expect(url.startsWith(mailing.runtime.ctx.config.publicUrl)).toBe(true);

    const used = await setPasswordWithLink(mailing.url, url, 'a brand new password');
    expect(used.status).toBe(200);
    expect(used.headers.getSetCookie().some((c) => c.includes('sb_session='))).toBe(true);
    expect(await signInWorks(mailing, person.email, 'a brand new password')).toBe(true);
    expect(await signInWorks(mailing, person.email, TEST_MEMBER_PASSWORD)).toBe(false);
    // The session from before the reset has ended.
    expect(await accountStatus(mailing, oldSession)).toBe(303);

    // Used once: dead.
    const again = await setPasswordWithLink(mailing.url, url, 'yet another password');
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('expired or has already been used');
    expect(await signInWorks(mailing, person.email, 'yet another password')).toBe(false);
  });

  test('an unknown address gets the same answer and no mail', async () => {
    const known = await mailedMember();
    const unknown = uniqueEmail('nobody');
    const answers: string[] = [];
    for (const email of [unknown, known.email]) {
      const res = await submit(mailing.url, '/forgot-password', { email });
      expect(res.status).toBe(200);
      answers.push((await res.text()).replace(email, 'EMAIL'));
    }
    expect(answers[0]).toBe(answers[1]!);
    await resetMail(known.email); // the known one's mail arrives …
    expect(smtp.messages.some((m) => m.to.includes(unknown))).toBe(false); // … and none for the unknown one
  });

  test('a link past its hour is refused and sets nothing', async () => {
    const person = await mailedMember();
    await submit(mailing.url, '/forgot-password', { email: person.email });
    const url = linkIn((await resetMail(person.email)).text);
    ahead = 61 * 60_000;
    try {
      const late = await setPasswordWithLink(mailing.url, url, 'a password too late');
      expect(late.status).toBe(400);
      expect(await late.text()).toContain('expired');
    } finally {
      ahead = 0;
    }
    expect(await signInWorks(mailing, person.email, TEST_MEMBER_PASSWORD)).toBe(true);
    // Within its hour it still works.
    expect((await setPasswordWithLink(mailing.url, url, 'a password in time')).status).toBe(200);
  });

  test('requests for one address are throttled: 429 with Retry-After', async () => {
    const person = await mailedMember();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await submit(mailing.url, '/forgot-password', { email: person.email });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      await res.text();
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.at(-1)).toBe(429);
  });

  test('the forgot-password page in Chromium', async () => {
    await browser.withPage(async (page) => {
      await page.goto(`${mailing.url}/signin`);
      await Promise.all([page.waitForURL(/\/forgot-password$/), page.click('#forgot-password')]);
      await page.getByLabel('Email').fill('someone@example.com');
      await page.screenshot({ path: '/tmp/shots-22/forgot-password.png', fullPage: true });
      await Promise.all([page.waitForLoadState(), page.click('#send-link')]);
      expect(await page.textContent('#notice')).toContain('If an account uses someone@example.com');
      await page.screenshot({ path: '/tmp/shots-22/forgot-password-sent.png', fullPage: true });
    });
  });
});

describe('without mail: an Owner or Admin issues the link', () => {
  test('the page says to ask an Owner or Admin', async () => {
    const page = await fetch(`${service.url}/forgot-password`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Ask an Owner or Admin');
  });

  test('an Owner issues a link for an Agent; it works once', async () => {
    const agent = await memberWithToken(service, owner, 'AGENT');
    const issued = await service.call('POST', `/v3/members/${agent.userId}/password-reset`, { apikey: owner.token });
    expect(issued.status).toBe(201);
    expect(Object.keys(issued.body).sort()).toEqual(['expiresAt', 'url']);
    const expiresIn = Date.parse(issued.body.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(55 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(60 * 60_000);
    expect((await setPasswordWithLink(service.url, issued.body.url, 'set by the agent')).status).toBe(200);
    expect(await signInWorks(service, agent.email, 'set by the agent')).toBe(true);
    expect((await setPasswordWithLink(service.url, issued.body.url, 'set twice')).status).toBe(400);
  });

  test('an Admin resets an Agent but not an Owner; Managers and Agents cannot; another workspace’s member is 404', async () => {
    const admin = await memberWithToken(service, owner, 'ADMIN');
    const manager = await memberWithToken(service, owner, 'MANAGER');
    const agent = await memberWithToken(service, owner, 'AGENT');

    expect((await service.call('POST', `/v3/members/${agent.userId}/password-reset`, { apikey: admin.token })).status).toBe(201);
    expectStandardError(await service.call('POST', `/v3/members/${owner.userId}/password-reset`, { apikey: admin.token }), 403, 'Forbidden');
    expectStandardError(await service.call('POST', `/v3/members/${agent.userId}/password-reset`, { apikey: manager.token }), 403, 'Forbidden');
    expectStandardError(await service.call('POST', `/v3/members/${manager.userId}/password-reset`, { apikey: agent.token }), 403, 'Forbidden');

    const stranger = await service.bootstrap({ email: uniqueEmail('stranger'), workspace: 'Elsewhere' });
    expectStandardError(await service.call('POST', `/v3/members/${stranger.userId}/password-reset`, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('POST', `/v3/members/${stranger.userId}/password-reset`, { apikey: admin.token }), 404, 'Not Found');
    expectStandardError(await service.call('POST', '/v3/members/not-a-uuid/password-reset', { apikey: owner.token }), 400, 'Bad Request');
    expectStandardError(await service.call('POST', `/v3/members/${agent.userId}/password-reset`), 401, 'Unauthorized');
  });

  test('a member who also belongs to a workspace the actor does not administer is refused', async () => {
    const agent = await memberWithToken(service, owner, 'AGENT');
    const other = await service.bootstrap({ email: uniqueEmail('other-owner'), workspace: 'Other' });
    // The agent is also an Admin of another workspace.
    const invited = await service.call('POST', '/v3/members', { apikey: other.token, body: { email: agent.email, roles: ['ADMIN'] } });
    expect(invited.status).toBe(201);
    expect((await answerInvitation(service.url, invited.body.invitationUrl, { password: TEST_MEMBER_PASSWORD })).status).toBe(200);
    expectStandardError(await service.call('POST', `/v3/members/${agent.userId}/password-reset`, { apikey: owner.token }), 403, 'Forbidden');
  });
});
