import { describe, expect, test } from 'bun:test';
import { useTestService, useOwner } from '../support/service.ts';
import { expectStandardError, memberWithToken, UUID } from './helpers.ts';

/** API tokens over HTTP: spec 2.4, 4.2, 5.1 and the "API tokens" row of the roles matrix (2.14). */

const service = useTestService();
const owner = useOwner(service);

async function create(apikey: string, name: string) {
  return service.call('POST', '/v3/api-tokens', { apikey, body: { name } });
}

async function works(apikey: string): Promise<number> {
  return (await service.call('GET', '/v3/accounts', { apikey })).status;
}

describe('creation', () => {
  test('POST /v3/api-tokens answers 201 { id, name, token, prefix, tokenLast4 }', async () => {
    // Spec 4.2: "POST | /v3/api-tokens | { name } | 201 { id, name, token, prefix, tokenLast4 }"
    const res = await create(owner.token, 'ci pipeline');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'ci pipeline', prefix: 'sk_live' });
    expect(res.body.id).toMatch(UUID);
    // Spec 2.4: "token | Full secret, begins with `sk_live_`."
    expect(res.body.token).toStartWith('sk_live_');
    expect(res.body.token.length).toBeGreaterThan('sk_live_'.length + 16);
    // Spec 2.4: "tokenLast4 | Last four characters of the token."
    expect(res.body.tokenLast4).toBe(res.body.token.slice(-4));
  });

  test('two tokens get different secrets and ids', async () => {
    // Spec 2.4: the token is a secret; two creations must not hand out the same one.
    const a = await create(owner.token, 'a');
    const b = await create(owner.token, 'b');
    expect(a.body.token).not.toBe(b.body.token);
    expect(a.body.id).not.toBe(b.body.id);
  });

  test('the secret is returned once: the list never shows it', async () => {
    // Spec 2.4: "Returned exactly once, in the creation response. Only a hash is stored."
    const created = await create(owner.token, 'listed');
    const secret: string = created.body.token;
    const list = await service.call('GET', '/v3/api-tokens?per_page=100', { apikey: owner.token });
    expect(list.status).toBe(200);
    const item = list.body.data.find((t: { id: string }) => t.id === created.body.id);
    expect(item).toMatchObject({ id: created.body.id, name: 'listed', prefix: 'sk_live', tokenLast4: secret.slice(-4) });
    for (const t of list.body.data) expect(t).not.toHaveProperty('token');
    const text = JSON.stringify(list.body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice('sk_live_'.length));
    // Nor the bootstrap secret of the caller.
    expect(text).not.toContain(owner.token);
  });

  test('a new token authenticates at once', async () => {
    // Spec 5.1: "Header `apikey: <API_KEY>`, value verbatim including its `sk_live_` prefix."
    const created = await create(owner.token, 'fresh');
    const res = await service.call('GET', '/v3/accounts', { apikey: created.body.token });
    expect(res.status).toBe(200);
    expect(res.body.map((w: { id: string }) => w.id)).toContain(owner.workspaceId);
  });

  test('a name is required', async () => {
    // Spec 4.2: request `{ name }`; spec 7.1: "400 | Malformed request".
    expectStandardError(await service.call('POST', '/v3/api-tokens', { apikey: owner.token, body: {} }), 400, 'Bad Request');
    expectStandardError(await create(owner.token, ''), 400, 'Bad Request');
  });
});

describe('rotation', () => {
  test('PATCH { refreshToken: true } issues a new secret; the old one is 401 at once', async () => {
    // Spec 4.2: "PATCH | /v3/api-tokens/{id} | { refreshToken: true } rotates; old secret stops working when the new is issued | new token object"
    const created = await create(owner.token, 'rotate me');
    const old: string = created.body.token;
    expect(await works(old)).toBe(200);

    const rotated = await service.call('PATCH', `/v3/api-tokens/${created.body.id}`, { apikey: owner.token, body: { refreshToken: true } });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: created.body.id, name: 'rotate me', prefix: 'sk_live' });
    expect(rotated.body.token).toStartWith('sk_live_');
    expect(rotated.body.token).not.toBe(old);
    expect(rotated.body.tokenLast4).toBe(rotated.body.token.slice(-4));

    // Spec 7.1: "401 | API key missing, wrong or revoked".
    expectStandardError(await service.call('GET', '/v3/accounts', { apikey: old }), 401, 'Unauthorized');
    expect(await works(rotated.body.token)).toBe(200);
  });

  test('a token can rotate itself; the answer carries the only working secret', async () => {
    // Spec 4.2: "old secret stops working when the new is issued".
    const created = await create(owner.token, 'self rotate');
    const rotated = await service.call('PATCH', `/v3/api-tokens/${created.body.id}`, { apikey: created.body.token, body: { refreshToken: true } });
    expect(rotated.status).toBe(200);
    expect(await works(created.body.token)).toBe(401);
    expect(await works(rotated.body.token)).toBe(200);
  });

  test('PATCH with {} is 400 in the standard shape and changes nothing', async () => {
    // Spec 7.1: "400 | Malformed request or rejected by a business rule." Spec 7.2 standard shape.
    const created = await create(owner.token, 'untouched');
    const res = await service.call('PATCH', `/v3/api-tokens/${created.body.id}`, { apikey: owner.token, body: {} });
    expectStandardError(res, 400, 'Bad Request');
    expect(await works(created.body.token)).toBe(200);
  });

  test('PATCH { refreshToken: "yes" } is 400 (wrong type)', async () => {
    // Spec 7.2: validation failures answer the standard shape with one message per broken rule.
    const created = await create(owner.token, 'typed');
    const res = await service.call('PATCH', `/v3/api-tokens/${created.body.id}`, { apikey: owner.token, body: { refreshToken: 'yes' } });
    expectStandardError(res, 400, 'Bad Request');
    expect(await works(created.body.token)).toBe(200);
  });
});

describe('revocation', () => {
  test('DELETE revokes immediately', async () => {
    // Spec 4.2: "DELETE | /v3/api-tokens/{id} | none | revokes immediately"
    const created = await create(owner.token, 'doomed');
    expect(await works(created.body.token)).toBe(200);
    const res = await service.call('DELETE', `/v3/api-tokens/${created.body.id}`, { apikey: owner.token });
    expect(res.status).toBe(200);
    expectStandardError(await service.call('GET', '/v3/accounts', { apikey: created.body.token }), 401, 'Unauthorized');
    const list = await service.call('GET', '/v3/api-tokens?per_page=100', { apikey: owner.token });
    expect(list.body.data.map((t: { id: string }) => t.id)).not.toContain(created.body.id);
  });

  test('unknown ids are 404: rotate, delete, and delete twice', async () => {
    // Spec 7.1: "404 | Does not exist or is not visible to the caller."
    const missing = '01900000-0000-7000-8000-000000000000';
    expectStandardError(await service.call('PATCH', `/v3/api-tokens/${missing}`, { apikey: owner.token, body: { refreshToken: true } }), 404, 'Not Found');
    expectStandardError(await service.call('DELETE', `/v3/api-tokens/${missing}`, { apikey: owner.token }), 404, 'Not Found');

    const created = await create(owner.token, 'twice');
    expect((await service.call('DELETE', `/v3/api-tokens/${created.body.id}`, { apikey: owner.token })).status).toBe(200);
    expectStandardError(await service.call('DELETE', `/v3/api-tokens/${created.body.id}`, { apikey: owner.token }), 404, 'Not Found');
  });

  test("another workspace's token is 404, never touched", async () => {
    // Spec 7.1: "404 | Does not exist or is not visible to the caller."
    const stranger = await service.bootstrap();
    const theirs = await create(stranger.token, 'theirs');
    expectStandardError(await service.call('DELETE', `/v3/api-tokens/${theirs.body.id}`, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('PATCH', `/v3/api-tokens/${theirs.body.id}`, { apikey: owner.token, body: { refreshToken: true } }), 404, 'Not Found');
    expect(await works(theirs.body.token)).toBe(200);
    const list = await service.call('GET', '/v3/api-tokens?per_page=100', { apikey: owner.token });
    expect(list.body.data.map((t: { id: string }) => t.id)).not.toContain(theirs.body.id);
  });
});

describe('who manages tokens', () => {
  test('Managers and Agents cannot create, list, rotate or delete tokens (403)', async () => {
    // Spec 5.1: "Only an Owner or Admin can create, rotate or delete tokens."
    // Spec 2.14: "API tokens and OAuth apps | yes | yes | no | no"
    const target = await create(owner.token, 'target');
    for (const role of ['MANAGER', 'AGENT'] as const) {
      const member = await memberWithToken(service, owner, role);
      expect(await works(member.token)).toBe(200); // the setup token itself is valid
      const denied = [
        await create(member.token, 'nope'),
        await service.call('GET', '/v3/api-tokens', { apikey: member.token }),
        await service.call('PATCH', `/v3/api-tokens/${target.body.id}`, { apikey: member.token, body: { refreshToken: true } }),
        await service.call('DELETE', `/v3/api-tokens/${target.body.id}`, { apikey: member.token }),
      ];
      for (const res of denied) {
        expectStandardError(res, 403, 'Forbidden');
        // Spec 7.2: "role denied | Insufficient account permissions | 403"
        expect(res.body.message).toBe('Insufficient account permissions');
      }
    }
    expect(await works(target.body.token)).toBe(200);
  });

  test('an Admin creates tokens that act as the Admin, not as anyone above', async () => {
    // Spec 2.4: "A token carries no scopes. It inherits the permissions of the user who created it, in the workspace it belongs to."
    const admin = await memberWithToken(service, owner, 'ADMIN');
    const created = await create(admin.token, 'admin integration');
    expect(created.status).toBe(201);
    const accounts = await service.call('GET', '/v3/accounts', { apikey: created.body.token });
    expect(accounts.status).toBe(200);
    expect(accounts.body.find((w: { id: string }) => w.id === owner.workspaceId).roles).toEqual(['ADMIN']);
    // Spec 2.14: "Update the workspace | yes | no | no | no": the Admin's token cannot either.
    const rename = await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: created.body.token, body: { name: 'hijacked' } });
    expectStandardError(rename, 403, 'Forbidden');
  });

  test("an Admin cannot rotate or delete the Owner's token (403) but manages their own", async () => {
    // Spec 5.1: "The key acts as the member who created it"; spec 2.14 rules: "a member can never grant a role at or above their own."
    const admin = await memberWithToken(service, owner, 'ADMIN');
    const ownersToken = await create(owner.token, "owner's integration");

    expectStandardError(await service.call('PATCH', `/v3/api-tokens/${ownersToken.body.id}`, { apikey: admin.token, body: { refreshToken: true } }), 403, 'Forbidden');
    expectStandardError(await service.call('DELETE', `/v3/api-tokens/${ownersToken.body.id}`, { apikey: admin.token }), 403, 'Forbidden');
    expect(await works(ownersToken.body.token)).toBe(200);

    const own = await create(admin.token, 'admin own');
    expect(own.status).toBe(201);
    const rotated = await service.call('PATCH', `/v3/api-tokens/${own.body.id}`, { apikey: admin.token, body: { refreshToken: true } });
    expect(rotated.status).toBe(200);
    expect(await works(own.body.token)).toBe(401);
    expect(await works(rotated.body.token)).toBe(200);
    expect((await service.call('DELETE', `/v3/api-tokens/${own.body.id}`, { apikey: admin.token })).status).toBe(200);
    expect(await works(rotated.body.token)).toBe(401);
  });

  test("the Owner can revoke an Admin's token", async () => {
    // Spec 5.1: "Only an Owner or Admin can create, rotate or delete tokens."
    const admin = await memberWithToken(service, owner, 'ADMIN');
    const theirs = await create(admin.token, 'admin made');
    expect((await service.call('DELETE', `/v3/api-tokens/${theirs.body.id}`, { apikey: owner.token })).status).toBe(200);
    expect(await works(theirs.body.token)).toBe(401);
  });

  test("removing a member makes their tokens 401", async () => {
    // Spec 5.1: "The key acts as the member who created it"; spec 2.4: "It inherits the permissions of the user who created it".
    const admin = await memberWithToken(service, owner, 'ADMIN');
    const made = await create(admin.token, 'made by a leaver');
    expect(await works(admin.token)).toBe(200);
    expect(await works(made.body.token)).toBe(200);

    const removed = await service.call('DELETE', `/v3/members/${admin.userId}`, { apikey: owner.token });
    expect(removed.status).toBe(200);
    expectStandardError(await service.call('GET', '/v3/accounts', { apikey: admin.token }), 401, 'Unauthorized');
    expect(await works(made.body.token)).toBe(401);
    expect(await works(owner.token)).toBe(200);
  });
});
