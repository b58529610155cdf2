import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { inviteMember } from '../../core/identity/invitations.ts';
import type { Role } from '../../core/identity/roles.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { answerInvitation } from '../support/invitations.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import { useTestService } from '../support/service.ts';
import { withBrowserPage } from '../support/browser.ts';
import { HOOK_TIMEOUT, mintTokenFor, uniqueEmail } from './helpers.ts';

/**
 * Issue 19, section 3 ("Accounts cannot be pre-claimed"): someone makes an account for an
 * address they do not own; it stays never verified. "Joining a workspace needs the invitee's
 * own acceptance, proved by something only the real address owner has." When the address's
 * owner accepts a mailed invitation, its token proves the mailbox: they may take the account
 * over with a password of their own, and every session, API token, OAuth grant and open socket
 * of the earlier holder stops working. A verified account still takes its password.
 */

const REDIRECT = 'http://127.0.0.1:9/callback';
const PRE_CLAIM_PASSWORD = 'chosen by the pre-claimer';
const OWNER_PASSWORD = 'chosen by the real owner';

let smtp: SmtpReceiver;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  smtp = await startSmtpReceiver();
}, HOOK_TIMEOUT);

const service = useTestService(() => ({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'Switchboard <invites@example.com>' } }));

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await smtp?.close();
}, HOOK_TIMEOUT);

const cookieHeader = (setCookies: string[]) => setCookies.map((c) => c.split(';')[0]!).join('; ');
/** The link of the latest mail to `email` (POST /v3/members answers once the SMTP server took it). */
const mailedLink = async (email: string) => {
  await smtp.next(email);
  const latest = smtp.messages.filter((m) => m.to.includes(email)).at(-1)!;
  return latest.text.match(/https?:\/\/\S+\/invitations\/accept\?token=\S+/)![0]!;
};

/** Signs in on /signin as a browser does; the session's Cookie header, or undefined when refused. */
async function signIn(email: string, password: string): Promise<string | undefined> {
  const form = await fetch(`${service.url}/signin`);
  const csrf = (await form.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
  const res = await fetch(`${service.url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(form.headers.getSetCookie()) },
    body: new URLSearchParams({ csrf, email, password, return_to: '/account' }),
  });
  await res.text();
  return res.status === 303 ? cookieHeader(res.headers.getSetCookie().filter((c) => c.includes('sb_session='))) : undefined;
}

/** 200 while the session is live; 303 to the sign-in page once it is not. */
async function accountPage(cookie: string): Promise<number> {
  const res = await fetch(`${service.url}/account`, { redirect: 'manual', headers: { cookie } });
  await res.text();
  return res.status;
}

/** The signed-in person authorizes a public client for `workspaceId`: its access and refresh tokens. */
async function oauthGrant(session: string, workspaceId: string): Promise<{ clientId: string; access: string; refresh: string }> {
  const registered = await service.call('POST', '/v3/oauth/register', {
    body: { redirect_uris: [REDIRECT], client_name: 'Pre-claimer app', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
  });
  expect(registered.status).toBe(201);
  const clientId: string = registered.body.client_id;
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(`${service.url}/v3/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'connections:read',
    state: 'takeover',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  const started = await fetch(url, { redirect: 'manual', headers: { cookie: session } });
  const consent = await (await fetch(`${service.url}${started.headers.get('location')!}`, { headers: { cookie: session } })).text();
  const decided = await fetch(`${service.url}/v3/oauth/authorize/decision`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session },
    body: new URLSearchParams({
      request_id: consent.match(/name="request_id" value="([^"]+)"/)![1]!,
      csrf: consent.match(/name="csrf" value="([^"]+)"/)![1]!,
      decision: 'approve',
      workspace_id: workspaceId,
      scope: 'connections:read',
    }),
  });
  const code = new URL(decided.headers.get('location')!).searchParams.get('code');
  expect(code).toBeString();
  const tokens = await tokenRequest({ grant_type: 'authorization_code', code: code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
  expect(tokens.status).toBe(200);
  return { clientId, access: tokens.body.access_token, refresh: tokens.body.refresh_token };
}

async function tokenRequest(body: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}/v3/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
  return { status: res.status, body: await res.json() };
}

const withBearer = async (access: string) => (await fetch(`${service.url}/v3/connections`, { headers: { authorization: `Bearer ${access}` } })).status;

/**
 * The pre-claim: a PRO Owner of a workspace of their own invites `victim` there by link (no mail
 * to prove the address) and accepts the link themselves with PRE_CLAIM_PASSWORD; answers them.
 */
async function preClaim(workspace: string, victim: string, role: Role, answer: { name?: string } = {}) {
  const ctx = service.runtime.ctx;
  const claimer = await service.bootstrap({ workspace, plan: 'PRO' });
  const linkInvite = await ctx.db
    .transaction()
    .execute((trx) => inviteMember(baseStores(trx), ctx, { userId: claimer.userId, workspaceId: claimer.workspaceId, roles: ['OWNER'] }, { email: victim, roles: [role], deliveredBy: 'link' }));
  const claimed = await answerInvitation(service.url, `${service.url}/invitations/accept?token=${linkInvite.token}`, { password: PRE_CLAIM_PASSWORD, ...answer });
  expect(claimed.status).toBe(200);
  return claimer;
}

function disconnection(socket: TestSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!socket.socket.connected) return resolve('already disconnected');
    const timer = setTimeout(() => reject(new Error('still connected 5 s after the takeover')), 5_000);
    socket.socket.once('disconnect', (reason) => {
      clearTimeout(timer);
      resolve(reason);
    });
  });
}

describe('taking over a pre-claimed account with a mailed invitation', () => {
  test("pre-claim through a passed-on link, then a mailed invitation: the address's owner sets a new password and the pre-claimer's sessions, tokens, grants and sockets stop working", async () => {
    const ctx = service.runtime.ctx;
    // The pre-claimer runs a workspace of their own and, while it had no SMTP_URL (invitations
    // delivered by link), invited the victim's address and accepted the link themselves.
    const victim = uniqueEmail('victim');
    const claimer = await preClaim('Pre-claimer Workspace', victim, 'ADMIN', { name: 'Not the victim' });
    const account = await ctx.db.selectFrom('users').select(['id', 'email_verified_at']).where('email', '=', victim).executeTakeFirstOrThrow();
    expect(account.email_verified_at).toBeNull();
    const personalBefore = await ctx.db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .select('workspaces.id')
      .where('memberships.user_id', '=', account.id)
      .where('workspaces.is_personal', '=', true)
      .executeTakeFirstOrThrow();

    // What the pre-claimer holds: a web session, an API token, an OAuth grant, an open socket.
    const session = await signIn(victim, PRE_CLAIM_PASSWORD);
    expect(session).toBeDefined();
    expect(await accountPage(session!)).toBe(200);
    const apiToken = await mintTokenFor(service, account.id, claimer.workspaceId, 'made by the pre-claimer');
    expect((await service.call('GET', '/v3/connections', { apikey: apiToken })).status).toBe(200);
    const grant = await oauthGrant(session!, claimer.workspaceId);
    expect(await withBearer(grant.access)).toBe(200);
    const socket = await connectHelpdesk(service.url, apiToken, { transports: ['websocket'] });
    sockets.push(socket);
    expect(socket.socket.connected).toBe(true);

    // Another workspace invites the address; the mail reaches its real owner.
    const inviting = await service.bootstrap({ workspace: 'Inviting Workspace' });
    const invited = await service.call('POST', '/v3/members', { apikey: inviting.token, body: { email: victim, roles: ['AGENT'] } });
    expect(invited.status).toBe(201);
    const link = await mailedLink(victim);
    const page = await fetch(`${service.url}${new URL(link).pathname}${new URL(link).search}`);
    const pageText = await page.text();
    expect(pageText).toContain('id="takeover-notice"');
    expect(pageText).toContain('id="takeover"');

    // The owner does not know the pre-claimer's password: accepting with their own is refused ...
    const wrong = await answerInvitation(service.url, link, { password: OWNER_PASSWORD });
    expect(wrong.status).toBe(400);
    // ... taking the account over with it is not.
    const gone = disconnection(socket);
    const taken = await answerInvitation(service.url, link, { action: 'takeover', password: OWNER_PASSWORD, name: 'Real Owner' });
    expect(taken.status).toBe(200);
    expect(taken.text).toContain('You joined Inviting Workspace');

    // Every credential the pre-claimer held is dead.
    expect(await gone).toBe('io server disconnect');
    expect(await accountPage(session!)).toBe(303);
    expect((await service.call('GET', '/v3/connections', { apikey: apiToken })).status).toBe(401);
    expect(await withBearer(grant.access)).toBe(401);
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: grant.refresh, client_id: grant.clientId });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    expect(await signIn(victim, PRE_CLAIM_PASSWORD)).toBeUndefined();

    // The owner's password works; the address is verified; the name is theirs.
    const ownerSession = await signIn(victim, OWNER_PASSWORD);
    expect(ownerSession).toBeDefined();
    expect(await accountPage(ownerSession!)).toBe(200);
    const after = await ctx.db.selectFrom('users').select(['name', 'email_verified_at']).where('id', '=', account.id).executeTakeFirstOrThrow();
    expect(after.email_verified_at).toBeInstanceOf(Date);
    expect(after.name).toBe('Real Owner');

    // Memberships: the inviting workspace and a fresh personal one; not the workspace joined by
    // the passed-on link, nor the personal workspace the pre-claimer set up.
    const memberships = await ctx.db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .select(['workspaces.id', 'workspaces.is_personal', 'memberships.roles'])
      .where('memberships.user_id', '=', account.id)
      .execute();
    expect(memberships.map((m) => m.id)).toContain(inviting.workspaceId);
    expect(memberships.map((m) => m.id)).not.toContain(claimer.workspaceId);
    expect(memberships.map((m) => m.id)).not.toContain(personalBefore.id);
    expect(memberships.filter((m) => m.is_personal)).toHaveLength(1);
    expect((await service.call('GET', `/v3/members?s=${encodeURIComponent(victim)}`, { apikey: claimer.token })).body.total).toBe(0);
  }, HOOK_TIMEOUT);

  test('a verified account is not taken over: its password is still required, and the page does not offer it', async () => {
    const victim = uniqueEmail('verified');
    const first = await service.bootstrap({ workspace: 'First Mailer' });
    expect((await service.call('POST', '/v3/members', { apikey: first.token, body: { email: victim, roles: ['AGENT'] } })).status).toBe(201);
    expect((await answerInvitation(service.url, await mailedLink(victim), { password: OWNER_PASSWORD })).status).toBe(200);
    const session = await signIn(victim, OWNER_PASSWORD);
    expect(session).toBeDefined();

    const second = await service.bootstrap({ workspace: 'Second Mailer' });
    expect((await service.call('POST', '/v3/members', { apikey: second.token, body: { email: victim, roles: ['AGENT'] } })).status).toBe(201);
    const link = await mailedLink(victim);
    const page = await (await fetch(`${service.url}${new URL(link).pathname}${new URL(link).search}`)).text();
    expect(page).not.toContain('id="takeover"');

    const takeover = await answerInvitation(service.url, link, { action: 'takeover', password: 'someone else entirely' });
    expect(takeover.status).toBe(400);
    expect(takeover.text).toContain('its address is confirmed');
    const wrong = await answerInvitation(service.url, link, { password: 'someone else entirely' });
    expect(wrong.status).toBe(400);
    expect(await accountPage(session!)).toBe(200);
    expect(await signIn(victim, 'someone else entirely')).toBeUndefined();

    const joined = await answerInvitation(service.url, link, { password: OWNER_PASSWORD });
    expect(joined.status).toBe(200);
    expect(joined.text).toContain('You joined Second Mailer');
  }, HOOK_TIMEOUT);

  test('in Chromium: the mailed link shows the take-over choice, a mismatched repeat is refused on the page, and the new password takes the account over', async () => {
    const victim = uniqueEmail('browser-victim');
    await preClaim('Browser Pre-claimer', victim, 'AGENT');
    const inviting = await service.bootstrap({ workspace: 'Browser Inviting Workspace' });
    expect((await service.call('POST', '/v3/members', { apikey: inviting.token, body: { email: victim, roles: ['AGENT'] } })).status).toBe(201);
    const link = await mailedLink(victim);

    await withBrowserPage(async (page) => {
      await page.goto(link);
      expect(await page.locator('#takeover-notice').isVisible()).toBe(true);
      expect(await page.locator('#email').textContent()).toBe(victim);
      await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/invitation-takeover.png`, fullPage: true });

      await page.fill('#password', OWNER_PASSWORD);
      await page.fill('#password-confirm', 'not the same password');
      await page.click('#takeover');
      expect(await page.locator('#error').textContent()).toContain('password');
      await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/invitation-takeover-error.png`, fullPage: true });

      await page.fill('#password', OWNER_PASSWORD);
      await page.fill('#password-confirm', OWNER_PASSWORD);
      await page.click('#takeover');
      expect(await page.locator('body').textContent()).toContain('You joined Browser Inviting Workspace');
      await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/invitation-takeover-done.png`, fullPage: true });
    });
    expect(await signIn(victim, PRE_CLAIM_PASSWORD)).toBeUndefined();
    expect(await signIn(victim, OWNER_PASSWORD)).toBeDefined();
  }, HOOK_TIMEOUT);
});
