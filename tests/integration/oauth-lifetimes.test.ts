import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sha256 } from '@noble/hashes/sha2.js';
import { baseStores, unitOfWork } from '../../adapters/postgres/stores.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { consentScreen, decide, startAuthorization } from '../../core/oauth/authorize.ts';
import { authenticateBearer } from '../../core/oauth/bearer.ts';
import { registerClient } from '../../core/oauth/clients.ts';
import { OAuthError } from '../../core/oauth/errors.ts';
import type { OAuthDeps } from '../../core/oauth/store.ts';
import { grantTokens } from '../../core/oauth/tokens.ts';
import { DomainError } from '../../core/shared/errors.ts';
import { base64url } from '../../core/tokens/secret.ts';
import { openTestContext, type TestContext } from '../support/context.ts';
import { HOOK_TIMEOUT } from './helpers.ts';
import { clientMetadataDocuments } from '../../adapters/outbound/client-metadata.ts';
import { ensureMetadataDocumentClient } from '../../core/oauth/metadata-document.ts';
import { rememberScopeChallenge } from '../../core/oauth/step-up.ts';
import { hashSecret } from '../../core/tokens/secret.ts';

/**
 * The lifetimes of section 8 and 3.3 on a clock the test moves: a pending authorization request
 * lives 10 minutes, a code 60 seconds, an access token 1 hour, a refresh token 30 days of
 * inactivity (each rotation restarts it).
 */
class MovableClock {
  private at = Date.parse('2026-11-23T10:00:00.000Z');
  now() {
    return new Date(this.at);
  }
  advance(ms: number) {
    this.at += ms;
  }
}

const clock = new MovableClock();
let test_: TestContext;
let deps: OAuthDeps;
let person: { userId: string; workspaceId: string };
let clientId: string;
const REDIRECT = 'https://app.example/cb';
const MINUTE = 60_000;

beforeAll(async () => {
  test_ = await openTestContext({ clock });
  const { ctx } = test_;
  deps = { clock, ids: ctx.ids, random: ctx.random, issuer: 'http://localhost', dynamicRegistration: true };
  person = await ctx.db.transaction().execute((trx) => bootstrapOwner(baseStores(trx), ctx, { email: `life-${crypto.randomUUID()}@example.com`, workspace: 'W', plan: 'FREE' }));
  clientId = (await registerClient(baseStores(ctx.db), deps, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] })).client_id;
}, HOOK_TIMEOUT);

afterAll(async () => {
  await test_?.close();
});

const stores = () => baseStores(test_.ctx.db);
const verifier = 'v'.repeat(50);
const challenge = base64url(sha256(new TextEncoder().encode(verifier)));

async function pending(): Promise<string> {
  const outcome = await startAuthorization(stores(), deps, { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', scope: 'connections:read', prompt: 'consent' }, person.userId);
  if (outcome.next !== 'consent') throw new Error(`expected the consent screen, got ${JSON.stringify(outcome)}`);
  return outcome.requestId;
}

async function code(): Promise<string> {
  const location = await decide(stores(), deps, { requestId: await pending(), userId: person.userId, approve: true, workspaceId: person.workspaceId, scopes: ['connections:read'] });
  return new URL(location).searchParams.get('code')!;
}

const exchange = async (c: string) => grantTokens(unitOfWork(test_.ctx.db), deps, (await stores().oauth.findClient(clientId))!, { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: verifier });
const refresh = async (r: string) => grantTokens(unitOfWork(test_.ctx.db), deps, (await stores().oauth.findClient(clientId))!, { grant_type: 'refresh_token', refresh_token: r });
const alive = (token: string) =>
  authenticateBearer(stores(), { clock }, { token, requestUrl: 'http://localhost/v3/connections', accountId: undefined }).then(
    () => true,
    (error) => (error instanceof OAuthError && error.code === 'invalid_token' ? false : Promise.reject(error)),
  );

describe('lifetimes', () => {
  test('a pending authorization request expires after 10 minutes', async () => {
    // Spec 3.3: "Pending authorization request | 10 minutes elapse | timeout | Expires."
    const fresh = await pending();
    clock.advance(9 * MINUTE);
    expect((await consentScreen(stores(), deps, fresh, person.userId)).requestId).toBe(fresh);
    clock.advance(MINUTE + 1);
    await expect(consentScreen(stores(), deps, fresh, person.userId)).rejects.toBeInstanceOf(DomainError);
    const answer = new URL(await decide(stores(), deps, { requestId: fresh, userId: person.userId, approve: true, workspaceId: person.workspaceId, scopes: ['connections:read'] }));
    // Not access_denied (nobody refused): invalid_request, "authorization request expired" (issue 20 item 16).
    expect(answer.searchParams.get('error')).toBe('invalid_request');
    expect(answer.searchParams.get('code')).toBeNull();
  });

  test('a code is exchangeable for 60 seconds', async () => {
    // Spec 8: "Authorization code | 60 seconds, single use".
    const late = await code();
    clock.advance(60_001);
    await expect(exchange(late)).rejects.toMatchObject({ code: 'invalid_grant' });
    const timely = await code();
    clock.advance(59_000);
    expect((await exchange(timely)).access_token).toStartWith('sbat_');
  });

  test('an access token lives 1 hour; a refresh token 30 days of inactivity, restarted by each rotation', async () => {
    const tokens = await exchange(await code());
    clock.advance(59 * MINUTE);
    expect(await alive(tokens.access_token)).toBe(true);
    clock.advance(MINUTE + 1);
    expect(await alive(tokens.access_token)).toBe(false);

    clock.advance(29 * 24 * 60 * MINUTE);
    const rotated = await refresh(tokens.refresh_token!);
    expect(await alive(rotated.access_token)).toBe(true);
    // 30 days after the rotation (59 days after the first issue) the new refresh token is still good...
    clock.advance(30 * 24 * 60 * MINUTE - MINUTE);
    const again = await refresh(rotated.refresh_token!);
    // ...and 30 days of inactivity end it.
    clock.advance(30 * 24 * 60 * MINUTE + 1);
    await expect(refresh(again.refresh_token!)).rejects.toMatchObject({ code: 'invalid_grant' });
  });
});

describe('issue 20: a metadata document copy and a scope challenge expire', () => {
  test('a Client ID Metadata Document is fetched again after its Cache-Control max-age, within 5 minutes and 24 hours', async () => {
    let hits = 0;
    let cacheControl = 'no-store';
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(request) {
        hits++;
        return Response.json({ client_id: request.url, client_name: 'Cached', redirect_uris: [REDIRECT] }, { headers: { 'cache-control': cacheControl } });
      },
    });
    try {
      const withDocuments: OAuthDeps = { ...deps, metadataDocuments: clientMetadataDocuments(test_.ctx.outbound) };
      const ensure = (path: string) => ensureMetadataDocumentClient(stores(), withDocuments, `http://127.0.0.1:${server.port}${path}`, 'invalid_input');
      // no-store: kept the 5-minute floor.
      await ensure('/floor.json');
      clock.advance(5 * MINUTE - 1);
      await ensure('/floor.json');
      expect(hits).toBe(1);
      clock.advance(2);
      await ensure('/floor.json');
      expect(hits).toBe(2);
      // A week of max-age: kept 24 hours at most.
      cacheControl = 'max-age=604800';
      await ensure('/ceiling.json');
      clock.advance(24 * 60 * MINUTE - 1);
      await ensure('/ceiling.json');
      expect(hits).toBe(3);
      clock.advance(2);
      await ensure('/ceiling.json');
      expect(hits).toBe(4);
    } finally {
      server.stop(true);
    }
  });

  test('a scope challenge refuses the next refresh once, and only for 10 minutes', async () => {
    const tokens = await exchange(await code());
    const consentId = (await stores().oauth.findToken(hashSecret(tokens.access_token)))!.consentId;
    await rememberScopeChallenge(stores(), deps, consentId, ['connections:read', 'messages:send']);
    await expect(refresh(tokens.refresh_token!)).rejects.toMatchObject({ code: 'invalid_grant' });
    // Once: the same refresh token then renews the narrower scope.
    const renewed = await refresh(tokens.refresh_token!);
    expect(renewed.scope).toBe('connections:read');
    // Ten minutes later an unanswered challenge no longer stands in the way.
    await rememberScopeChallenge(stores(), deps, consentId, ['messages:send']);
    clock.advance(10 * MINUTE + 1);
    expect((await refresh(renewed.refresh_token!)).scope).toBe('connections:read');
  });
});
