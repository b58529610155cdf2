import { beforeAll, describe, expect, test } from 'bun:test';
import { useTestService, useOwner } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT, uniqueEmail } from './helpers.ts';

/** `apikey` authentication (spec 5.1) and workspace selection with `X-Account-Id` (spec 5.2). */

const service = useTestService();
const owner = useOwner(service);

describe('apikey', () => {
  test('no apikey is 401 in the standard shape', async () => {
    // Spec 7.1: "401 | API key missing, wrong or revoked (or invalid bearer token)."
    // Spec 7.2: "Standard: { statusCode: <int>, message: <...a string otherwise>, error: <status text> }"
    for (const [method, path] of [
      ['GET', '/v3/accounts'],
      ['GET', '/v3/summary'],
      ['GET', '/v3/api-tokens'],
      ['GET', '/v3/members'],
      ['POST', '/v3/api-tokens'],
      ['DELETE', `/v3/api-tokens/${owner.workspaceId}`],
    ] as const) {
      const res = await service.call(method, path, method === 'POST' ? { body: { name: 'x' } } : {});
      expectStandardError(res, 401, 'Unauthorized');
      expect(typeof res.body.message).toBe('string');
    }
  });

  test('a valid key in `Authorization: Bearer` without apikey is 401', async () => {
    // Spec 5.1: "`Authorization: Bearer` is ignored on endpoints that expect an API key, and the request fails with 401."
    // Bearer is the OAuth credential (5.3): an API key there is an unknown access token (7.5).
    const res = await service.call('GET', '/v3/accounts', { headers: { authorization: `Bearer ${owner.token}` } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // The same key in `apikey` works, so the 401 above is about the header, not the key.
    expect((await service.call('GET', '/v3/accounts', { apikey: owner.token })).status).toBe(200);
  });

  test('a bearer header next to a valid apikey is ignored, not merged', async () => {
    // Spec 5.2: "Never send both credential headers; on an endpoint expecting one, the other is ignored, not merged."
    const res = await service.call('GET', '/v3/accounts', { apikey: owner.token, headers: { authorization: 'Bearer garbage' } });
    expect(res.status).toBe(200);
    const bad = await service.call('GET', '/v3/accounts', { apikey: 'sk_live_garbage', headers: { authorization: `Bearer ${owner.token}` } });
    expectStandardError(bad, 401, 'Unauthorized');
  });

  test('garbage keys are 401', async () => {
    // Spec 7.1: "401 | API key missing, wrong or revoked".
    const last = owner.token.at(-1) === 'A' ? 'B' : 'A';
    for (const apikey of ['garbage', 'sk_live_', 'sk_live_garbage', `${owner.token.slice(0, -1)}${last}`, owner.token.slice('sk_live_'.length), ` ${owner.token}x`]) {
      expectStandardError(await service.call('GET', '/v3/accounts', { apikey }), 401, 'Unauthorized');
    }
  });
});

describe('X-Account-Id', () => {
  // Spec 5.2: "The token's own workspace applies by default." /
  // "`X-Account-Id: <workspace id>` switches to another workspace the caller belongs to."
  let a: { userId: string; workspaceId: string; token: string };
  let b: { userId: string; workspaceId: string; token: string };

  beforeAll(async () => {
    const email = uniqueEmail('two-workspaces');
    a = await service.bootstrap({ email, workspace: 'Alpha' });
    b = await service.bootstrap({ email, workspace: 'Beta' });
  }, HOOK_TIMEOUT);

  test('bootstrapping the same email twice gives one person two workspaces', async () => {
    expect(b.userId).toBe(a.userId);
    expect(b.workspaceId).not.toBe(a.workspaceId);
  });

  test("without the header a token acts in its own workspace", async () => {
    // Spec 5.2: "The token's own workspace applies by default."
    const res = await service.call('GET', '/v3/summary', { apikey: a.token });
    expect(res.status).toBe(200);
    expect(res.body.workspaceId).toBe(a.workspaceId);
  });

  test('the token of workspace A with X-Account-Id: B acts in B', async () => {
    // Spec 5.2: "`X-Account-Id: <workspace id>` switches to another workspace the caller belongs to."
    const summary = await service.call('GET', '/v3/summary', { apikey: a.token, headers: { 'x-account-id': b.workspaceId } });
    expect(summary.status).toBe(200);
    expect(summary.body.workspaceId).toBe(b.workspaceId);

    // A write through A's token with X-Account-Id: B lands in B, not in A.
    const email = uniqueEmail('joined-b');
    const added = await service.call('POST', '/v3/members', { apikey: a.token, headers: { 'x-account-id': b.workspaceId }, body: { email, roles: ['AGENT'] } });
    expect(added.status).toBe(201);
    const pendingIn = async (apikey: string) => (await service.call('GET', '/v3/members/invitations?per_page=100', { apikey })).body.data.map((i: { email: string }) => i.email);
    expect(await pendingIn(b.token)).toContain(email);
    expect(await pendingIn(a.token)).not.toContain(email);
  });

  test("the personal workspace can be selected too", async () => {
    // Spec 2.3: workspaces have `isPersonal`; spec 5.2: any workspace the caller belongs to.
    const accounts = await service.call('GET', '/v3/accounts', { apikey: a.token });
    const personal = accounts.body.find((w: { isPersonal: boolean }) => w.isPersonal);
    expect(personal).toBeDefined();
    const res = await service.call('GET', '/v3/summary', { apikey: a.token, headers: { 'x-account-id': personal.id } });
    expect(res.status).toBe(200);
    expect(res.body.workspaceId).toBe(personal.id);
  });

  test('a workspace the caller is not a member of is 403', async () => {
    // Spec 5.2: "A workspace the caller is not a member of answers 403."
    const stranger = await service.bootstrap();
    const res = await service.call('GET', '/v3/summary', { apikey: a.token, headers: { 'x-account-id': stranger.workspaceId } });
    expectStandardError(res, 403, 'Forbidden');
    // A well-formed id of no workspace at all: also 403, the caller is not a member of it.
    const none = await service.call('GET', '/v3/summary', { apikey: a.token, headers: { 'x-account-id': '01900000-0000-7000-8000-000000000000' } });
    expectStandardError(none, 403, 'Forbidden');
    // Nor can it write there.
    const write = await service.call('POST', '/v3/members', { apikey: a.token, headers: { 'x-account-id': stranger.workspaceId }, body: { email: uniqueEmail('x'), roles: ['AGENT'] } });
    expectStandardError(write, 403, 'Forbidden');
  });

  test('a malformed X-Account-Id is 403, never 500', async () => {
    // Spec 5.2: "A workspace the caller is not a member of answers 403." (no such workspace can exist)
    for (const value of ['not-a-uuid', '123', "'; drop table workspaces; --", `${b.workspaceId}x`]) {
      const res = await service.call('GET', '/v3/summary', { apikey: a.token, headers: { 'x-account-id': value } });
      expectStandardError(res, 403, 'Forbidden');
    }
  });

  test('a missing or bad key is 401 whatever X-Account-Id says', async () => {
    // Spec 7.1: "401 | API key missing, wrong or revoked"; workspace selection (403) only applies to a known caller.
    for (const value of [b.workspaceId, 'not-a-uuid']) {
      expectStandardError(await service.call('GET', '/v3/summary', { apikey: 'sk_live_garbage', headers: { 'x-account-id': value } }), 401, 'Unauthorized');
      expectStandardError(await service.call('GET', '/v3/summary', { headers: { 'x-account-id': value } }), 401, 'Unauthorized');
    }
  });
});

describe('requests arriving together', () => {
  // The API-key lookups of requests that arrive together are one statement
  // (adapters/postgres/coalesced-lookup.ts): each request must still act as its own key's member.
  test('each of many simultaneous requests acts in its own key\'s workspace, and a bad key among them is 401', async () => {
    const callers = await Promise.all(Array.from({ length: 6 }, () => service.bootstrap()));
    const keys = [...callers.map((c) => ({ token: c.token, workspaceId: c.workspaceId as string | undefined })), { token: 'sk_live_garbage', workspaceId: undefined }];
    const calls = Array.from({ length: 60 }, (_, i) => keys[i % keys.length]!);
    const answers = await Promise.all(calls.map((k) => service.call('GET', '/v3/summary', { apikey: k.token })));
    answers.forEach((res, i) => {
      const expected = calls[i]!.workspaceId;
      if (expected === undefined) expectStandardError(res, 401, 'Unauthorized');
      else {
        expect(res.status).toBe(200);
        expect(res.body.workspaceId).toBe(expected);
      }
    });
  });

  test('a revoked key is refused by the next request, even while other requests keep arriving', async () => {
    // Spec 7.1: "401 | API key missing, wrong or revoked".
    const caller = await service.bootstrap();
    const created = await service.call('POST', '/v3/api-tokens', { apikey: caller.token, body: { name: 'short-lived' } });
    expect(created.status).toBe(201);
    const key = created.body.token as string;
    expect((await service.call('GET', '/v3/summary', { apikey: key })).status).toBe(200);
    const background = Array.from({ length: 20 }, () => service.call('GET', '/v3/summary', { apikey: caller.token }));
    expect((await service.call('DELETE', `/v3/api-tokens/${created.body.id}`, { apikey: caller.token })).status).toBe(200);
    expectStandardError(await service.call('GET', '/v3/summary', { apikey: key }), 401, 'Unauthorized');
    for (const res of await Promise.all(background)) expect(res.status).toBe(200);
  });
});
