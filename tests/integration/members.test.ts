import { beforeAll, describe, expect, test } from 'bun:test';
import { useTestService, useOwner } from '../support/service.ts';
import { answerInvitation } from '../support/invitations.ts';
import { setPassword } from '../../core/identity/passwords.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { addMember, expectStandardError, HOOK_TIMEOUT, memberWithToken, uniqueEmail, UUID } from './helpers.ts';

/**
 * Members of a workspace. The endpoints are not shown in the spec (designed here); the rules
 * are spec 2.14: "Members | yes | yes | yes | read" and "a member can never grant a role at or
 * above their own", plus the error shapes of 7.2.
 */

let admin: { userId: string; email: string; token: string };
let manager: { userId: string; email: string; token: string };
let agent: { userId: string; email: string; token: string };

const service = useTestService();
const owner = useOwner(service);

beforeAll(async () => {
  admin = await memberWithToken(service, owner, 'ADMIN');
  manager = await memberWithToken(service, owner, 'MANAGER');
  agent = await memberWithToken(service, owner, 'AGENT');
}, HOOK_TIMEOUT);

const post = (apikey: string, body: unknown) => service.call('POST', '/v3/members', { apikey, body });
const patch = (apikey: string, userId: string, roles: string[]) => service.call('PATCH', `/v3/members/${userId}`, { apikey, body: { roles } });
const remove = (apikey: string, userId: string) => service.call('DELETE', `/v3/members/${userId}`, { apikey });
const rolesOf = async (userId: string) => {
  const list = await service.call('GET', '/v3/members?per_page=100', { apikey: owner.token });
  return list.body.data.find((m: { userId: string }) => m.userId === userId)?.roles;
};

describe('listing and adding', () => {
  test('GET /v3/members answers the pagination envelope', async () => {
    // Spec 2.2: "Response body: { data: [..], total: <int>, totalPages: <int>, currentPage: <int>, perPage: <int> }."
    const res = await service.call('GET', '/v3/members', { apikey: owner.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['currentPage', 'data', 'perPage', 'total', 'totalPages']);
    expect(res.body).toMatchObject({ total: 4, totalPages: 1, currentPage: 1, perPage: 10 });
    expect(res.body.data).toHaveLength(4);
    const me = res.body.data.find((m: { userId: string }) => m.userId === owner.userId);
    expect(me.roles).toEqual(['OWNER']);
    expect(me.email).toContain('@');
    expect(res.body.data.map((m: { userId: string }) => m.userId).sort()).toEqual([owner.userId, admin.userId, manager.userId, agent.userId].sort());
  });

  test('inviting answers 201 with a pending invitation; the person is a member only once they accept; then inviting again is 409', async () => {
    // Spec 7.1: "201 | Created; default for POST." / "409 | Collides with something existing."
    const email = uniqueEmail('newcomer');
    const res = await post(owner.token, { email, roles: ['AGENT'] });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['deliveredBy', 'email', 'expiresAt', 'invitationId', 'invitationUrl', 'roles', 'status']);
    expect(res.body).toMatchObject({ email, roles: ['AGENT'], status: 'PENDING', deliveredBy: 'link' });
    expect(res.body.invitationId).toMatch(UUID);
    // Spec 2.1: "Timestamps in and out | ISO 8601 in UTC with milliseconds".
    expect(res.body.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const listed = await service.call('GET', `/v3/members?s=${encodeURIComponent(email)}`, { apikey: owner.token });
    expect(listed.body.total).toBe(0);

    const accepted = await answerInvitation(service.url, res.body.invitationUrl, { password: 'the newcomer password' });
    expect(accepted.status).toBe(200);
    const joined = await service.call('GET', `/v3/members?s=${encodeURIComponent(email)}`, { apikey: owner.token });
    expect(joined.body.data.map((m: { roles: string[] }) => m.roles)).toEqual([['AGENT']]);

    expectStandardError(await post(owner.token, { email, roles: ['AGENT'] }), 409, 'Conflict');
    // Emails are case-insensitive: the same person in capitals collides too.
    expectStandardError(await post(owner.token, { email: email.toUpperCase(), roles: ['MANAGER'] }), 409, 'Conflict');
    expect(await rolesOf(joined.body.data[0].userId)).toEqual(['AGENT']);
  });

  test('an existing person of the service joins only by accepting with their own password; the account is not duplicated', async () => {
    // Spec 5.2: one person can belong to several workspaces; issue 19: "joining a workspace needs the invitee's own acceptance".
    const elsewhere = await service.bootstrap();
    const email = (await service.runtime.ctx.db.selectFrom('users').select('email').where('id', '=', elsewhere.userId).executeTakeFirstOrThrow()).email;
    await setPassword(baseStores(service.runtime.ctx.db), passwordHasher, elsewhere.userId, 'elsewhere owner password');
    const reach = () => service.call('GET', '/v3/summary', { apikey: elsewhere.token, headers: { 'x-account-id': owner.workspaceId } });

    const res = await post(owner.token, { email, roles: ['AGENT'] });
    expect(res.status).toBe(201);
    expect(res.body.userId).toBeUndefined();
    expect((await reach()).status).not.toBe(200);

    // The link alone, with a password of the holder's choosing, does not attach the account.
    const guessed = await answerInvitation(service.url, res.body.invitationUrl, { password: 'a password of my own' });
    expect(guessed.status).toBe(400);
    expect(guessed.text).toContain('enter its password');
    expect((await reach()).status).not.toBe(200);

    expect((await answerInvitation(service.url, res.body.invitationUrl, { password: 'elsewhere owner password' })).status).toBe(200);
    // That person's own token now reaches this workspace too.
    const here = await reach();
    expect(here.status).toBe(200);
    expect(here.body.workspaceId).toBe(owner.workspaceId);
    const users = await service.runtime.ctx.db.selectFrom('users').select('id').where('email', '=', email).execute();
    expect(users).toHaveLength(1);
  });
});

describe('grant rule: nobody grants a role at or above their own', () => {
  // Spec 2.14: "Rules: a member can never grant a role at or above their own."

  test('the Owner cannot add another OWNER, but adds ADMIN', async () => {
    expectStandardError(await post(owner.token, { email: uniqueEmail('o2'), roles: ['OWNER'] }), 403, 'Forbidden');
    expect((await post(owner.token, { email: uniqueEmail('a2'), roles: ['ADMIN'] })).status).toBe(201);
  });

  test('an Admin cannot add ADMIN or OWNER but adds MANAGER and AGENT', async () => {
    expectStandardError(await post(admin.token, { email: uniqueEmail('x'), roles: ['ADMIN'] }), 403, 'Forbidden');
    expectStandardError(await post(admin.token, { email: uniqueEmail('x'), roles: ['OWNER'] }), 403, 'Forbidden');
    // One forbidden role among allowed ones refuses the whole request.
    const mixed = uniqueEmail('mixed');
    expectStandardError(await post(admin.token, { email: mixed, roles: ['AGENT', 'ADMIN'] }), 403, 'Forbidden');
    const listed = await service.call('GET', `/v3/members?s=${encodeURIComponent(mixed)}`, { apikey: owner.token });
    expect(listed.body.total).toBe(0);

    const m = await post(admin.token, { email: uniqueEmail('m'), roles: ['MANAGER'] });
    expect(m.status).toBe(201);
    expect(m.body.roles).toEqual(['MANAGER']);
    expect((await post(admin.token, { email: uniqueEmail('a'), roles: ['AGENT'] })).status).toBe(201);
  });

  test('a Manager adds AGENT only', async () => {
    // Spec 2.14: "Members | yes | yes | yes | read" with the grant rule.
    expect((await post(manager.token, { email: uniqueEmail('ag'), roles: ['AGENT'] })).status).toBe(201);
    for (const role of ['MANAGER', 'ADMIN', 'OWNER']) {
      expectStandardError(await post(manager.token, { email: uniqueEmail('x'), roles: [role] }), 403, 'Forbidden');
    }
  });

  test('an Admin cannot promote a Manager to ADMIN', async () => {
    const target = await addMember(service, owner.token, 'MANAGER');
    expectStandardError(await patch(admin.token, target.userId, ['ADMIN']), 403, 'Forbidden');
    expect(await rolesOf(target.userId)).toEqual(['MANAGER']);
  });
});

describe('an Agent only reads members', () => {
  // Spec 2.14: "Members | yes | yes | yes | read"; spec 7.2: "role denied | Insufficient account permissions | 403".

  test('GET is 200', async () => {
    const res = await service.call('GET', '/v3/members', { apikey: agent.token });
    expect(res.status).toBe(200);
    expect(res.body.total).toBeGreaterThanOrEqual(4);
  });

  test("POST, PATCH and DELETE are 403 'Insufficient account permissions'", async () => {
    const victim = await addMember(service, owner.token, 'AGENT');
    for (const res of [
      await post(agent.token, { email: uniqueEmail('by-agent'), roles: ['AGENT'] }),
      await patch(agent.token, victim.userId, ['AGENT']),
      await remove(agent.token, victim.userId),
    ]) {
      expectStandardError(res, 403, 'Forbidden');
      expect(res.body.message).toBe('Insufficient account permissions');
    }
    expect(await rolesOf(victim.userId)).toEqual(['AGENT']);
  });
});

describe('acting on members', () => {
  test('nobody changes their own roles', async () => {
    // Spec 2.14 rules: a member can never grant a role at or above their own (so not to themselves either).
    for (const [who, roles] of [
      [owner, ['ADMIN']],
      [admin, ['MANAGER']],
      [manager, ['AGENT']],
    ] as const) {
      expectStandardError(await patch(who.token, who.userId, [...roles]), 403, 'Forbidden');
    }
    expect(await rolesOf(owner.userId)).toEqual(['OWNER']);
    expect(await rolesOf(admin.userId)).toEqual(['ADMIN']);
    expect(await rolesOf(manager.userId)).toEqual(['MANAGER']);
  });

  test('nobody changes or removes a member at or above their rank', async () => {
    // Spec 2.14: "a member can never grant a role at or above their own"; acting on a peer or a superior is refused alike.
    const otherAdmin = await addMember(service, owner.token, 'ADMIN');
    const otherManager = await addMember(service, owner.token, 'MANAGER');

    expectStandardError(await patch(admin.token, otherAdmin.userId, ['AGENT']), 403, 'Forbidden');
    expectStandardError(await remove(admin.token, otherAdmin.userId), 403, 'Forbidden');
    expectStandardError(await patch(admin.token, owner.userId, ['AGENT']), 403, 'Forbidden');
    expectStandardError(await remove(admin.token, owner.userId), 403, 'Forbidden');
    expectStandardError(await patch(manager.token, otherManager.userId, ['AGENT']), 403, 'Forbidden');
    expectStandardError(await remove(manager.token, otherManager.userId), 403, 'Forbidden');
    expectStandardError(await remove(manager.token, admin.userId), 403, 'Forbidden');

    expect(await rolesOf(otherAdmin.userId)).toEqual(['ADMIN']);
    expect(await rolesOf(otherManager.userId)).toEqual(['MANAGER']);
    expect(await rolesOf(owner.userId)).toEqual(['OWNER']);
  });

  test('members below are changed and removed', async () => {
    // Spec 2.14: "Members | yes | yes | yes | read".
    const target = await addMember(service, owner.token, 'MANAGER');
    const changed = await patch(admin.token, target.userId, ['AGENT']);
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ userId: target.userId, roles: ['AGENT'] });
    expect(await rolesOf(target.userId)).toEqual(['AGENT']);

    const removed = await remove(manager.token, target.userId);
    expect(removed.status).toBe(200);
    expect(await rolesOf(target.userId)).toBeUndefined();
    // Spec 7.1: "404 | Does not exist or is not visible to the caller."
    expectStandardError(await remove(owner.token, target.userId), 404, 'Not Found');
    expectStandardError(await patch(owner.token, target.userId, ['AGENT']), 404, 'Not Found');
  });

  test('nobody removes themselves', async () => {
    expectStandardError(await remove(owner.token, owner.userId), 403, 'Forbidden');
    expect(await rolesOf(owner.userId)).toEqual(['OWNER']);
  });
});

describe('validation', () => {
  test('a bad email and a bad role name are two messages in one 400', async () => {
    // Spec 7.2: "message: <array of strings for validation failures, one per broken rule>"
    const res = await post(owner.token, { email: 'not-an-email', roles: ['BOSS'] });
    expectStandardError(res, 400, 'Bad Request');
    expect(Array.isArray(res.body.message)).toBe(true);
    expect(res.body.message).toHaveLength(2);
    expect(res.body.message.filter((m: string) => m.includes('email'))).toHaveLength(1);
    expect(res.body.message.filter((m: string) => m.includes('roles'))).toHaveLength(1);
  });

  test('an empty role list is 400', async () => {
    // Spec 7.1: "400 | Malformed request or rejected by a business rule."
    const res = await post(owner.token, { email: uniqueEmail('none'), roles: [] });
    expectStandardError(res, 400, 'Bad Request');
    expectStandardError(await patch(owner.token, agent.userId, []), 400, 'Bad Request');
    expect(await rolesOf(agent.userId)).toEqual(['AGENT']);
  });
});
