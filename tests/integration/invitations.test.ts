import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { answerInvitation } from '../support/invitations.ts';
import { type TestService, useTestService } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, uniqueEmail } from './helpers.ts';

/**
 * Issue 19, section 3, "Accounts cannot be pre-claimed": "Workspace A's inviter sets the password
 * of `victim@…`; when workspace B later adds the same email, B's data is open to whoever A's
 * inviter is … Required property: no secret that one workspace's member receives or chooses ever
 * lets anyone act in another workspace. Joining a workspace needs the invitee's own acceptance,
 * proved by something only the real address owner has." And: "`POST /v3/members` answers the same
 * shape whether or not the email has an account."
 */

const REDIRECT = 'http://127.0.0.1:9/callback';

let smtp: SmtpReceiver;

beforeAll(async () => {
  smtp = await startSmtpReceiver({ user: 'mailer', password: 'smtp secret' });
}, HOOK_TIMEOUT);

// One after the other (a hook each): two at once on a busy machine can outlast the hook's timeout.
const service = useTestService();
const mailing = useTestService(() => ({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'Switchboard <invites@example.com>' } }));

afterAll(async () => {
  await smtp?.close();
}, HOOK_TIMEOUT);

const invite = (target: TestService, apikey: string, email: string, roles = ['AGENT']) => target.call('POST', '/v3/members', { apikey, body: { email, roles } });
const cookieHeader = (setCookies: string[]) => setCookies.map((c) => c.split(';')[0]!).join('; ');

/** Signs in on /signin as a browser does; answers the session's Cookie header, or undefined. */
async function signIn(email: string, password: string): Promise<string | undefined> {
  const form = await fetch(`${service.url}/signin`);
  const formCookie = cookieHeader(form.headers.getSetCookie());
  const csrf = (await form.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
  const res = await fetch(`${service.url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
    body: new URLSearchParams({ csrf, email, password, return_to: '/account' }),
  });
  return res.status === 303 ? cookieHeader(res.headers.getSetCookie().filter((c) => c.includes('sb_session='))) : undefined;
}

/** Runs the OAuth consent as the signed-in person and tries to approve for `workspaceId`. */
async function consentFor(session: string, workspaceId: string): Promise<{ offered: string; location: string | null }> {
  const registered = await service.call('POST', '/v3/oauth/register', { body: { redirect_uris: [REDIRECT], client_name: 'Pre-claim probe', token_endpoint_auth_method: 'none' } });
  expect(registered.status).toBe(201);
  const url = new URL(`${service.url}/v3/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: registered.body.client_id,
    redirect_uri: REDIRECT,
    scope: 'profile connections:read',
    state: 'probe',
    code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
    code_challenge_method: 'S256',
    prompt: 'consent',
  }).toString();
  const started = await fetch(url, { redirect: 'manual', headers: { cookie: session } });
  const consentPath = started.headers.get('location')!;
  const consent = await fetch(`${service.url}${consentPath}`, { headers: { cookie: session } });
  const offered = await consent.text();
  const requestId = offered.match(/name="request_id" value="([^"]+)"/)![1]!;
  const csrf = offered.match(/name="csrf" value="([^"]+)"/)![1]!;
  const decided = await fetch(`${service.url}/v3/oauth/authorize/decision`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session },
    body: new URLSearchParams({ request_id: requestId, csrf, decision: 'approve', workspace_id: workspaceId, scope: 'profile' }),
  });
  return { offered, location: decided.headers.get('location') };
}

describe('the two-workspace pre-claim (issue 19, section 3)', () => {
  test("A's inviter sets the victim's password through A's link; B invites the same email: B's answer does not tell, and A's inviter gets into B by no route", async () => {
    const a = await service.bootstrap({ workspace: 'Workspace A' });
    const b = await service.bootstrap({ workspace: 'Workspace B' });
    const victim = uniqueEmail('victim');

    // A invites the victim (no SMTP_URL: the inviter gets the link) and uses it themselves.
    const fromA = await invite(service, a.token, victim);
    expect(fromA.status).toBe(201);
    const claimed = await answerInvitation(service.url, fromA.body.invitationUrl, { password: 'chosen by A inviter', name: 'Not the victim' });
    expect(claimed.status).toBe(200);
    // A link the inviter passed on proves nothing about the address.
    const victimRow = await service.runtime.ctx.db.selectFrom('users').select(['id', 'email_verified_at']).where('email', '=', victim).executeTakeFirstOrThrow();
    expect(victimRow.email_verified_at).toBeNull();

    // B invites the victim and, for comparison, an address new to the service.
    const fresh = uniqueEmail('fresh');
    const toVictim = await invite(service, b.token, victim);
    const toFresh = await invite(service, b.token, fresh);
    expect(toVictim.status).toBe(201);
    expect(toFresh.status).toBe(201);
    expect(Object.keys(toVictim.body).sort()).toEqual(Object.keys(toFresh.body).sort());
    const comparable = (body: any) => ({ ...body, invitationId: 'id', email: 'email', expiresAt: 'at', invitationUrl: typeof body.invitationUrl });
    expect(comparable(toVictim.body)).toEqual(comparable(toFresh.body));
    expect(toVictim.body.userId).toBeUndefined();

    // B has no new member: nothing was attached.
    const bMembers = await service.call('GET', `/v3/members?s=${encodeURIComponent(victim)}`, { apikey: b.token });
    expect(bMembers.body.total).toBe(0);

    // A's inviter signs in as the victim (the password they chose works) ...
    const session = await signIn(victim, 'chosen by A inviter');
    expect(session).toBeDefined();
    // ... but the OAuth consent does not offer B, and approving for B is refused.
    const { offered, location } = await consentFor(session!, b.workspaceId);
    expect(offered).not.toContain(b.workspaceId);
    expect(location ?? '').not.toContain('code=');

    // A's link, used already, does not open B's invitation, nor anything else.
    const again = await answerInvitation(service.url, fromA.body.invitationUrl, { password: 'chosen by A inviter' });
    expect(again.status).toBe(400);
    expect(again.text).toContain('already been accepted');
    const madeUp = await answerInvitation(service.url, `${service.url}/invitations/accept?token=inv_${'x'.repeat(43)}`, { password: 'chosen by A inviter' });
    expect(madeUp.status).toBe(400);
    expect((await service.call('GET', `/v3/members?s=${encodeURIComponent(victim)}`, { apikey: b.token })).body.total).toBe(0);
  });
});

describe('with SMTP_URL: the invitation is mailed', () => {
  test('the mail carries the link, the API answer does not; accepting the mailed link joins and marks the address verified', async () => {
    const owner = await mailing.bootstrap({ workspace: 'Mailed Workspace' });
    const email = uniqueEmail('mailed');
    const res = await invite(mailing, owner.token, email, ['MANAGER']);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email, roles: ['MANAGER'], status: 'PENDING', deliveredBy: 'mail' });
    expect(res.body.invitationUrl).toBeUndefined();

    const mail = await smtp.next(email);
    expect(mail.authUser).toBe('mailer');
    expect(mail.from).toBe('invites@example.com');
    expect(mail.headers.subject).toContain('Mailed Workspace');
    const link = mail.text.match(/https?:\/\/\S+\/invitations\/accept\?token=\S+/)?.[0];
    expect(link).toBeDefined();
    expect(new URL(link!).origin).toBe(mailing.runtime.ctx.config.publicUrl);
    expect(JSON.stringify(res.body)).not.toContain(new URL(link!).searchParams.get('token')!);

    const accepted = await answerInvitation(mailing.url, link!, { password: 'the mailed password', name: 'Mailed Person' });
    expect(accepted.status).toBe(200);
    expect(accepted.text).toContain('You joined Mailed Workspace');
    const row = await mailing.runtime.ctx.db.selectFrom('users').select(['id', 'name', 'email_verified_at']).where('email', '=', email).executeTakeFirstOrThrow();
    expect(row.email_verified_at).toBeInstanceOf(Date);
    expect(row.name).toBe('Mailed Person');
    const listed = await mailing.call('GET', `/v3/members?s=${encodeURIComponent(email)}`, { apikey: owner.token });
    expect(listed.body.data.map((m: any) => [m.userId, m.roles])).toEqual([[row.id, ['MANAGER']]]);
  });

  test('a mail the SMTP server refuses is a 502 in the standard shape, and no invitation is left pending', async () => {
    const owner = await mailing.bootstrap();
    const email = uniqueEmail('unsent');
    smtp.refusing = true;
    try {
      expectStandardError(await invite(mailing, owner.token, email), 502, 'Bad Gateway');
    } finally {
      smtp.refusing = false;
    }
    expect((await mailing.call('GET', '/v3/members/invitations', { apikey: owner.token })).body.total).toBe(0);
    // Once the server takes mail again, inviting works.
    expect((await invite(mailing, owner.token, email)).status).toBe(201);
    expect((await smtp.next(email)).to).toEqual([email]);
  });
});

describe('pending invitations: list, replace, revoke, decline, expire', () => {
  test('GET /v3/members/invitations lists the pending ones; a second invitation to the same email replaces the first', async () => {
    const owner = await service.bootstrap();
    const email = uniqueEmail('twice');
    const first = await invite(service, owner.token, email);
    const second = await invite(service, owner.token, email, ['MANAGER']);
    expect(second.status).toBe(201);
    const list = await service.call('GET', '/v3/members/invitations', { apikey: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.data[0]).toMatchObject({ invitationId: second.body.invitationId, email, roles: ['MANAGER'], status: 'PENDING', invitedBy: owner.userId });
    const stale = await answerInvitation(service.url, first.body.invitationUrl, { password: 'a long password' });
    expect(stale.status).toBe(400);
    expect(stale.text).toContain('withdrawn');
  });

  test('revoking kills the link; only invitations for roles below your own; twice is 409', async () => {
    const owner = await service.bootstrap();
    const manager = await memberWithToken(service, owner, 'MANAGER');
    const forAdmin = await invite(service, owner.token, uniqueEmail('admin'), ['ADMIN']);
    expectStandardError(await service.call('DELETE', `/v3/members/invitations/${forAdmin.body.invitationId}`, { apikey: manager.token }), 403, 'Forbidden');
    const revoked = await service.call('DELETE', `/v3/members/invitations/${forAdmin.body.invitationId}`, { apikey: owner.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ invitationId: forAdmin.body.invitationId, status: 'REVOKED' });
    expectStandardError(await service.call('DELETE', `/v3/members/invitations/${forAdmin.body.invitationId}`, { apikey: owner.token }), 409, 'Conflict');
    const page = await fetch(forAdmin.body.invitationUrl.replace(service.runtime.ctx.config.publicUrl, service.url));
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('withdrawn');
    // Another workspace's invitation is not there at all.
    const stranger = await service.bootstrap();
    const theirs = await invite(service, stranger.token, uniqueEmail('theirs'));
    expectStandardError(await service.call('DELETE', `/v3/members/invitations/${theirs.body.invitationId}`, { apikey: owner.token }), 404, 'Not Found');
  });

  test('declining marks the invitation DECLINED and joins nobody; the link then says so', async () => {
    const owner = await service.bootstrap();
    const email = uniqueEmail('decliner');
    const res = await invite(service, owner.token, email);
    const declined = await answerInvitation(service.url, res.body.invitationUrl, { action: 'decline' });
    expect(declined.status).toBe(200);
    expect(declined.text).toContain('You declined the invitation');
    expect((await service.call('GET', '/v3/members/invitations', { apikey: owner.token })).body.total).toBe(0);
    const later = await answerInvitation(service.url, res.body.invitationUrl, { password: 'a long password' });
    expect(later.status).toBe(400);
    expect(later.text).toContain('declined');
    expect(await service.runtime.ctx.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()).toBeUndefined();
  });

  test('an invitation past its 7 days shows a clear page and is no longer listed', async () => {
    const owner = await service.bootstrap();
    const res = await invite(service, owner.token, uniqueEmail('late'));
    expect(new Date(res.body.expiresAt).getTime() - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    // Test setup: the invitation was made 7 days and a minute ago.
    await service.runtime.ctx.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 60_000) }).where('id', '=', res.body.invitationId).execute();
    const page = await fetch(res.body.invitationUrl.replace(service.runtime.ctx.config.publicUrl, service.url));
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('has expired');
    expect((await service.call('GET', '/v3/members/invitations', { apikey: owner.token })).body.total).toBe(0);
  });

  test('the acceptance page: a POST without the form cookie and token is 403; a short password shows the rule and creates nothing', async () => {
    const owner = await service.bootstrap();
    const email = uniqueEmail('careful');
    const res = await invite(service, owner.token, email);
    const token = new URL(res.body.invitationUrl).searchParams.get('token')!;
    const forged = await fetch(`${service.url}/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, action: 'accept', password: 'attacker password', password_confirm: 'attacker password' }),
    });
    expect(forged.status).toBe(403);
    const short = await answerInvitation(service.url, res.body.invitationUrl, { password: 'short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('at least 10 characters');
    const mismatch = await answerInvitation(service.url, res.body.invitationUrl, { password: 'long enough one', confirmation: 'long enough two' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain('do not match');
    expect(await service.runtime.ctx.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()).toBeUndefined();
    // Only a hash of the token is stored.
    const stored = await service.runtime.ctx.db.selectFrom('invitations').selectAll().where('id', '=', res.body.invitationId).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(token);
  });
});
