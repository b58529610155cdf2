import { beforeAll, describe, expect, test } from 'bun:test';
import { setPassword } from '../../core/identity/passwords.ts';
import { passwordLinkFor, setPasswordWithLink } from '../support/password-page.ts';
import { SESSION_IDLE_MS } from '../../core/identity/sessions.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import { startTestService, useOwner, useTestService, type Owner } from '../support/service.ts';
import { MovableClock } from '../support/movable-clock.ts';
import { TEST_MEMBER_PASSWORD } from '../support/invitations.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, uniqueEmail, useMember } from './helpers.ts';

/**
 * Issue 22, section 1: signing in at `/signin` gives every member a session with which the `/v3`
 * API and the `/helpdesk` websocket act as them, under the roles matrix, with cross-site writes
 * refused; sessions are listed and ended, and end with a password change, a removal or an
 * Owner's "sign out everywhere" — live sockets included; idle and absolute expiry on the
 * service's clock.
 */

const HOUR = 60 * 60 * 1000;

/** The service's clock, moved forward by the expiry tests (last in the file). */
const clock = new MovableClock();
const service = useTestService({ clock });
const owner = useOwner(service);
const agent = useMember(service, owner, 'AGENT');
const OWNER_PASSWORD = 'the owner password of this file';
let ownerEmail: string;
let origin: string;

beforeAll(async () => {
  const ctx = service.runtime.ctx;
  await setPassword(baseStores(ctx.db), passwordHasher, owner.userId, OWNER_PASSWORD);
  ownerEmail = (await baseStores(ctx.db).identity.getUser(owner.userId))!.email;
  origin = new URL(ctx.config.publicUrl).origin;
}, HOOK_TIMEOUT);

interface Signed {
  /** `name=value` of the session cookie. */
  cookie: string;
  /** The whole Set-Cookie of the session. */
  setCookie: string;
}

/** Signs in over HTTP as a browser does: GET /signin (form cookie and token), then POST the form. */
async function signIn(baseUrl: string, email: string, password: string, userAgent = 'session-tests'): Promise<Signed> {
  const form = await fetch(`${baseUrl}/signin`, { headers: { 'user-agent': userAgent } });
  const formCookie = form.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
  const csrf = (await form.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
  const posted = await fetch(`${baseUrl}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie, 'user-agent': userAgent },
    body: new URLSearchParams({ csrf, email, password, return_to: '/account' }),
  });
  await posted.text();
  expect(posted.status).toBe(303);
  const setCookie = posted.headers.getSetCookie().find((c) => /sb_session=[^;]/.test(c));
  expect(setCookie).toBeDefined();
  return { cookie: setCookie!.split(';')[0]!, setCookie: setCookie! };
}

const signInOwner = (userAgent?: string) => signIn(service.url, ownerEmail, OWNER_PASSWORD, userAgent);
const signInAs = (email: string, userAgent?: string) => signIn(service.url, email, TEST_MEMBER_PASSWORD, userAgent);

/** A call made with the session cookie; `csrf`/`origin`/`referer`/`account` add those headers. */
function withSession(
  method: string,
  path: string,
  session: Signed,
  options: { body?: unknown; csrf?: string; origin?: string; referer?: string; account?: string } = {},
) {
  return service.call(method, path, {
    body: options.body,
    headers: {
      cookie: session.cookie,
      ...(options.csrf !== undefined && { 'x-csrf-token': options.csrf }),
      ...(options.origin !== undefined && { origin: options.origin }),
      ...(options.referer !== undefined && { referer: options.referer }),
      ...(options.account !== undefined && { 'x-account-id': options.account }),
    },
  });
}

/** GET /v3/session's answer (200 expected). */
async function whoAmI(session: Signed, account?: string) {
  const res = await withSession('GET', '/v3/session', session, { account });
  expect(res.status).toBe(200);
  return res.body;
}

/** A write as the service's own page makes it: its Origin and the session's CSRF token. */
async function write(method: string, path: string, session: Signed, body?: unknown, account?: string) {
  const { csrfToken } = await whoAmI(session, account);
  return withSession(method, path, session, { body, csrf: csrfToken, origin, account });
}

describe('signing in gives a session cookie', () => {
  test('HttpOnly, SameSite=Lax, Secure (loopback counts as secure), a new id on every sign-in', async () => {
    const first = await signInOwner();
    for (const attribute of ['HttpOnly', 'SameSite=Lax', 'Secure', 'Path=/']) expect(first.setCookie.split('; ')).toContain(attribute);
    expect(first.cookie.startsWith('__Host-sb_session=')).toBe(true);
    const second = await signInOwner();
    expect(second.cookie).not.toBe(first.cookie);
    // Both stand (two browsers), each its own session.
    expect((await whoAmI(first)).session.id).not.toBe((await whoAmI(second)).session.id);
  });

  test('behind https (PUBLIC_URL https://…) the cookie is Secure and __Host- prefixed; on plain http elsewhere it is not Secure', async () => {
    for (const [publicUrl, secure] of [
      ['https://switchboard.example', true],
      ['http://switchboard.example', false],
    ] as const) {
      const other = await startTestService({ env: { PUBLIC_URL: publicUrl } });
      try {
        const someone = await other.bootstrap({ email: uniqueEmail('https') });
        await setPassword(baseStores(other.runtime.ctx.db), passwordHasher, someone.userId, OWNER_PASSWORD);
        const email = (await baseStores(other.runtime.ctx.db).identity.getUser(someone.userId))!.email;
        const signed = await signIn(other.url, email, OWNER_PASSWORD);
        const attributes = signed.setCookie.split('; ');
        expect(attributes.includes('Secure')).toBe(secure);
        expect(attributes).toContain('HttpOnly');
        expect(attributes).toContain('SameSite=Lax');
        expect(signed.cookie.startsWith(secure ? '__Host-sb_session=' : 'sb_session=')).toBe(true);
        // Its writes must come from that public origin.
        const res = await other.call('GET', '/v3/session', { headers: { cookie: signed.cookie } });
        expect(res.status).toBe(200);
        const refused = await other.call('POST', '/v3/api-tokens', { body: { name: 'x' }, headers: { cookie: signed.cookie, 'x-csrf-token': res.body.csrfToken, origin: service.url } });
        expectStandardError(refused, 403, 'Forbidden');
        const made = await other.call('POST', '/v3/api-tokens', { body: { name: 'x' }, headers: { cookie: signed.cookie, 'x-csrf-token': res.body.csrfToken, origin: publicUrl } });
        expect(made.status).toBe(201);
      } finally {
        await other.stop();
      }
    }
  }, 120_000);
});

describe('the API acts as the signed-in member', () => {
  test('GET /v3/session answers the member, their workspaces with roles, and the CSRF token; an API key is refused', async () => {
    const session = await signInAs(agent.email);
    const me = await whoAmI(session);
    expect(me.user).toMatchObject({ userId: agent.userId, email: agent.email });
    // Joining by invitation gave them a personal workspace too; the default is the one they joined.
    expect(me.workspaces).toHaveLength(2);
    expect(me.workspaces).toContainEqual({ workspaceId: owner.workspaceId, name: expect.any(String), roles: ['AGENT'] });
    expect(me.workspaceId).toBe(owner.workspaceId);
    const personal = me.workspaces.find((w: { workspaceId: string }) => w.workspaceId !== owner.workspaceId);
    expect(personal.roles).toEqual(['OWNER']);
    // X-Account-Id selects the other.
    expect((await whoAmI(session, personal.workspaceId)).workspaceId).toBe(personal.workspaceId);
    expect((await withSession('GET', '/v3/api-tokens', session, { account: personal.workspaceId })).status).toBe(200);
    expect((await withSession('GET', '/v3/api-tokens', session)).status).toBe(403);
    expect(me.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(me.session).toMatchObject({ current: true, userAgent: 'session-tests' });
    expectStandardError(await service.call('GET', '/v3/session', { apikey: agent.token }), 403, 'Forbidden');
    expectStandardError(await service.call('GET', '/v3/session'), 401, 'Unauthorized');
    // A cookie naming no session is 401, like a wrong key.
    expectStandardError(await service.call('GET', '/v3/session', { headers: { cookie: `__Host-sb_session=${'A'.repeat(43)}` } }), 401, 'Unauthorized');
  });

  test('the roles matrix applies as for an API key: an Agent is refused where their key is, an Owner is not', async () => {
    const [agentSession, ownerSession] = await Promise.all([signInAs(agent.email), signInOwner()]);
    for (const path of ['/v3/api-tokens', '/v3/connections', '/v3/members']) {
      const byKey = await service.call('GET', path, { apikey: agent.token });
      const bySession = await withSession('GET', path, agentSession, { account: owner.workspaceId });
      expect({ path, status: bySession.status }).toEqual({ path, status: byKey.status });
      expect((await withSession('GET', path, ownerSession)).status).toBe(200);
    }
    expect((await service.call('GET', '/v3/api-tokens', { apikey: agent.token })).status).toBe(403);
    expect((await service.call('GET', '/v3/members', { apikey: agent.token })).status).toBe(200);
    // Writes too: an Agent may not create a connection, with the page's headers or not.
    expectStandardError(await write('POST', '/v3/connections', agentSession, { name: 'agent-made' }, owner.workspaceId), 403, 'Forbidden');
    const made = await write('POST', '/v3/api-tokens', ownerSession, { name: 'made-in-the-browser' });
    expect(made.status).toBe(201);
  });

  test('a write without X-CSRF-Token, with a wrong one, or from a foreign Origin is refused; with both it is done', async () => {
    const session = await signInOwner();
    const { csrfToken } = await whoAmI(session);
    const body = { name: 'csrf-check' };
    const refusals = [
      { origin }, // no token
      { origin, csrf: 'A'.repeat(43) }, // a wrong token
      { origin: 'https://evil.example', csrf: csrfToken },
      { csrf: csrfToken }, // neither Origin nor Referer
      { referer: 'https://evil.example/page', csrf: csrfToken },
      { origin: 'null', csrf: csrfToken },
    ];
    for (const headers of refusals) {
      const res = await withSession('POST', '/v3/api-tokens', session, { body, ...headers });
      expectStandardError(res, 403, 'Forbidden');
    }
    const listed = await service.call('GET', '/v3/api-tokens?per_page=100', { apikey: owner.token });
    expect(listed.body.data.filter((t: { name: string }) => t.name === 'csrf-check')).toHaveLength(0);

    expect((await withSession('POST', '/v3/api-tokens', session, { body, origin, csrf: csrfToken })).status).toBe(201);
    // Without Origin, a Referer of the service's own pages will do.
    expect((await withSession('POST', '/v3/api-tokens', session, { body, referer: `${origin}/console`, csrf: csrfToken })).status).toBe(201);
    // Another session's token is not this one's.
    const other = await whoAmI(await signInOwner());
    expectStandardError(await withSession('POST', '/v3/api-tokens', session, { body, origin, csrf: other.csrfToken }), 403, 'Forbidden');
    // An API key alongside the cookie wins, as before: no CSRF rules for it.
    const byKey = await service.call('POST', '/v3/api-tokens', { apikey: owner.token, body, headers: { cookie: session.cookie } });
    expect(byKey.status).toBe(201);
  });

  test('the answers are not readable from another origin (no CORS for the cookie-authenticated API)', async () => {
    const session = await signInOwner();
    const res = await withSession('GET', '/v3/session', session, { origin: 'https://evil.example' });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    const preflight = await fetch(`${service.url}/v3/api-tokens`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-csrf-token' },
    });
    await preflight.text();
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('X-Account-Id selects another workspace of the member; a workspace they are not in is 403; no reach into another tenant', async () => {
    const other: Owner = await service.bootstrap({ email: uniqueEmail('other-owner') });
    const stranger: Owner = await service.bootstrap({ email: uniqueEmail('stranger') });
    // The Agent is also a Manager of `other`'s workspace (test setup: the membership written directly).
    await baseStores(service.runtime.ctx.db).identity.insertMembership({ workspaceId: other.workspaceId, userId: agent.userId, roles: ['MANAGER'], createdAt: clock.now() });
    const session = await signInAs(agent.email);

    const there = await whoAmI(session, other.workspaceId);
    expect(there.workspaceId).toBe(other.workspaceId);
    expect(there.workspaces.map((w: { workspaceId: string }) => w.workspaceId)).toEqual(expect.arrayContaining([owner.workspaceId, other.workspaceId]));
    // As Manager there connections are readable; as Agent in the owner's workspace they are not.
    expect((await withSession('GET', '/v3/connections', session, { account: other.workspaceId })).status).toBe(200);
    expectStandardError(await write('POST', '/v3/connections', session, { name: 'agent-made' }, owner.workspaceId), 403, 'Forbidden');
    const made = await write('POST', '/v3/connections', session, { name: 'made-as-manager' }, other.workspaceId);
    expect(made.status).toBe(201);
    expect((await service.call('GET', `/v3/connections/${made.body.id}`, { apikey: other.token })).status).toBe(200);

    // A workspace they do not belong to, or an id that names none.
    expectStandardError(await withSession('GET', '/v3/members', session, { account: stranger.workspaceId }), 403, 'Forbidden');
    expectStandardError(await withSession('GET', '/v3/members', session, { account: 'not-a-uuid' }), 403, 'Forbidden');
    // The stranger's connection is out of reach from every workspace of the session.
    const theirs = await service.call('POST', '/v3/connections', { apikey: stranger.token, body: { name: 'theirs' } });
    expect(theirs.status).toBe(201);
    expect((await withSession('GET', `/v3/connections/${theirs.body.id}`, session, { account: other.workspaceId })).status).toBe(404);

    // Nor another tenant's sessions: the stranger's session id is not the Owner's to end.
    const strangerEmail = (await baseStores(service.runtime.ctx.db).identity.getUser(stranger.userId))!.email;
    await setPassword(baseStores(service.runtime.ctx.db), passwordHasher, stranger.userId, OWNER_PASSWORD);
    const strangerSession = await signIn(service.url, strangerEmail, OWNER_PASSWORD);
    const strangerSessionId = (await whoAmI(strangerSession)).session.id;
    const ownerSession = await signInOwner();
    expectStandardError(await write('DELETE', `/v3/sessions/${strangerSessionId}`, ownerSession), 404, 'Not Found');
    expectStandardError(await write('DELETE', `/v3/members/${stranger.userId}/sessions`, ownerSession), 404, 'Not Found');
    expect((await withSession('GET', '/v3/session', strangerSession)).status).toBe(200);
  });
});

describe('listing and ending sessions', () => {
  test('a member lists their sessions, ends one, then all others; another person\'s session is 404', async () => {
    const member = await memberWithToken(service, owner, 'AGENT');
    // Accepting the invitation signed them in: with an API key (no current session) that one ends too.
    expect((await service.call('DELETE', '/v3/sessions', { apikey: member.token })).body).toEqual({ ended: 1 });
    const laptop = await signInAs(member.email, 'laptop browser');
    const phone = await signInAs(member.email, 'phone browser');
    const tablet = await signInAs(member.email, 'tablet browser');

    const listed = await withSession('GET', '/v3/sessions', laptop);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(3);
    expect(listed.body.data.map((s: { userAgent: string }) => s.userAgent).sort()).toEqual(['laptop browser', 'phone browser', 'tablet browser']);
    const current = listed.body.data.filter((s: { current: boolean }) => s.current);
    expect(current).toHaveLength(1);
    expect(current[0].userAgent).toBe('laptop browser');
    for (const s of listed.body.data) {
      expect(Object.keys(s).sort()).toEqual(['absoluteExpiresAt', 'createdAt', 'current', 'expiresAt', 'id', 'lastSeenAt', 'userAgent']);
    }
    // With an API key none is current.
    const byKey = await service.call('GET', '/v3/sessions', { apikey: member.token });
    expect(byKey.body.data.every((s: { current: boolean }) => !s.current)).toBe(true);

    const phoneId = listed.body.data.find((s: { userAgent: string }) => s.userAgent === 'phone browser').id;
    // Ending needs the page's headers like any write.
    expectStandardError(await withSession('DELETE', `/v3/sessions/${phoneId}`, laptop), 403, 'Forbidden');
    expect((await write('DELETE', `/v3/sessions/${phoneId}`, laptop)).status).toBe(200);
    expectStandardError(await withSession('GET', '/v3/session', phone), 401, 'Unauthorized');
    expectStandardError(await write('DELETE', `/v3/sessions/${phoneId}`, laptop), 404, 'Not Found');
    // The Owner's session ids are not the member's to end.
    const ownerSessionId = (await whoAmI(await signInOwner())).session.id;
    expectStandardError(await write('DELETE', `/v3/sessions/${ownerSessionId}`, laptop), 404, 'Not Found');

    const ended = await write('DELETE', '/v3/sessions', laptop);
    expect(ended.body).toEqual({ ended: 1 });
    expectStandardError(await withSession('GET', '/v3/session', tablet), 401, 'Unauthorized');
    expect((await withSession('GET', '/v3/sessions', laptop)).body.data.map((s: { current: boolean }) => s.current)).toEqual([true]);
  });

  test('an Owner signs a member out everywhere; an Agent or an Admin may not; the member\'s API key keeps working', async () => {
    const member = await memberWithToken(service, owner, 'AGENT');
    const admin = await memberWithToken(service, owner, 'ADMIN');
    await service.call('DELETE', '/v3/sessions', { apikey: member.token }); // the invitation's own
    const [one, two] = [await signInAs(member.email), await signInAs(member.email)];
    const adminSession = await signInAs(admin.email);
    expectStandardError(await write('DELETE', `/v3/members/${owner.userId}/sessions`, one, undefined, owner.workspaceId), 403, 'Forbidden');
    expectStandardError(await write('DELETE', `/v3/members/${member.userId}/sessions`, adminSession, undefined, owner.workspaceId), 403, 'Forbidden');
    expectStandardError(await service.call('DELETE', `/v3/members/${member.userId}/sessions`, { apikey: admin.token }), 403, 'Forbidden');

    const ownerSession = await signInOwner();
    const res = await write('DELETE', `/v3/members/${member.userId}/sessions`, ownerSession);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ended: 2 });
    for (const s of [one, two]) expectStandardError(await withSession('GET', '/v3/session', s), 401, 'Unauthorized');
    expect((await service.call('GET', '/v3/members', { apikey: member.token })).status).toBe(200);
    // A person who is not a member of the workspace.
    expectStandardError(await service.call('DELETE', `/v3/members/${crypto.randomUUID()}/sessions`, { apikey: owner.token }), 404, 'Not Found');
  });
});

describe('the /helpdesk websocket with the session cookie', () => {
  /** In the owner's workspace (`X-Account-Id`; a member's own personal workspace comes first). */
  const connectWith = (session: Signed, from = origin) =>
    connectHelpdesk(service.url, undefined, { extraHeaders: { cookie: session.cookie, origin: from, 'x-account-id': owner.workspaceId } });

  function dropped(socket: TestSocket): Promise<string> {
    return new Promise((resolve) => {
      if (!socket.socket.connected) return resolve('already disconnected');
      socket.socket.once('disconnect', (reason) => resolve(reason));
    });
  }

  test('connects as the member; from a foreign Origin or with an ended session it is refused', async () => {
    const member = await memberWithToken(service, owner, 'AGENT');
    const session = await signInAs(member.email);
    const socket = await connectWith(session);
    const presence = await socket.next('presence.update');
    expect(Object.keys(presence.users)).toEqual(expect.arrayContaining([owner.userId, member.userId]));
    socket.close();

    await expect(connectWith(session, 'https://evil.example')).rejects.toThrow('unauthorized');
    await expect(connectHelpdesk(service.url, undefined, { extraHeaders: { cookie: `__Host-sb_session=${'A'.repeat(43)}`, origin } })).rejects.toThrow('unauthorized');
    await expect(connectHelpdesk(service.url, undefined)).rejects.toThrow('unauthorized');
  });

  test('dropped at once when the member is removed', async () => {
    const member = await memberWithToken(service, owner, 'AGENT');
    const socket = await connectWith(await signInAs(member.email));
    const gone = dropped(socket);
    expect((await service.call('DELETE', `/v3/members/${member.userId}`, { apikey: owner.token })).status).toBe(200);
    expect(await gone).toBe('io server disconnect');
  });

  test('dropped at once when the member\'s password changes (the password page)', async () => {
    const member = await memberWithToken(service, owner, 'AGENT');
    const session = await signInAs(member.email);
    const socket = await connectWith(session);
    const gone = dropped(socket);
    const posted = await setPasswordWithLink(service.url, await passwordLinkFor(service, member.userId), 'a brand new password for this member');
    await posted.text();
    expect(posted.status).toBe(200);
    expect(await gone).toBe('io server disconnect');
    expectStandardError(await withSession('GET', '/v3/session', session), 401, 'Unauthorized');
  });

  test('dropped at once when its session is ended by the member, or by an Owner signing them out everywhere', async () => {
    const member = await memberWithToken(service, owner, 'AGENT');
    const [laptop, phone] = [await signInAs(member.email), await signInAs(member.email)];
    const [laptopSocket, phoneSocket] = [await connectWith(laptop), await connectWith(phone)];
    const phoneGone = dropped(phoneSocket);
    const phoneId = (await whoAmI(phone)).session.id;
    expect((await write('DELETE', `/v3/sessions/${phoneId}`, laptop)).status).toBe(200);
    expect(await phoneGone).toBe('io server disconnect');
    expect(laptopSocket.socket.connected).toBe(true);

    const laptopGone = dropped(laptopSocket);
    expect((await service.call('DELETE', `/v3/members/${member.userId}/sessions`, { apikey: owner.token })).status).toBe(200);
    expect(await laptopGone).toBe('io server disconnect');
  });
});

// Last in the file: these move the service's clock forward.
describe('expiry', () => {
  test('idle: a session unused for 24 hours ends; each use moves that forward', async () => {
    const member = await memberWithToken(service, owner, 'AGENT');
    const session = await signInAs(member.email);
    const used = await signInAs(member.email);
    for (let i = 0; i < 3; i++) {
      clock.advance(SESSION_IDLE_MS - HOUR);
      expect((await withSession('GET', '/v3/members', used)).status).toBe(200);
    }
    expectStandardError(await withSession('GET', '/v3/members', session), 401, 'Unauthorized');
    clock.advance(SESSION_IDLE_MS + 1);
    expectStandardError(await withSession('GET', '/v3/members', used), 401, 'Unauthorized');
  });

  test('absolute: 14 days after sign-in a session ends however much it is used', async () => {
    const member = await memberWithToken(service, owner, 'AGENT');
    const session = await signInAs(member.email);
    const statuses: number[] = [];
    // Every 23 hours: 14 uses within the 336 hours, the 15th after.
    for (let i = 1; i <= 15; i++) {
      clock.advance(23 * HOUR);
      statuses.push((await withSession('GET', '/v3/members', session)).status);
    }
    expect(statuses).toEqual([...Array(14).fill(200), 401]);
    // The API key of the same member is a credential of its own.
    expect((await service.call('GET', '/v3/members', { apikey: member.token })).status).toBe(200);
  });
});
