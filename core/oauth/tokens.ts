import { sha256 } from '@noble/hashes/sha2.js';
import { base64url, hashSecret } from '../tokens/secret.ts';
import { ACCESS_TOKEN_TTL_SECONDS, codeState, REFRESH_TOKEN_TTL_SECONDS, tokenAlive, type IssuedToken } from './artefacts.ts';
import { requestableScopes, type OAuthClient } from './clients.ts';
import { OAuthError } from './errors.ts';
import { narrowsResource, resourceProblem } from './resource.ts';
import { joinScopes, splitScope, type Scope } from './scopes.ts';
import type { OAuthDeps, OAuthStores } from './store.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { unansweredChallenge } from './step-up.ts';

export const ACCESS_TOKEN_PREFIX = 'sbat_';
export const REFRESH_TOKEN_PREFIX = 'sbrt_';

/** Spec 2.6. `expires_in` and `refresh_token` are absent for a client with expiry switched off. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in?: number;
  refresh_token?: string;
  scope: string;
}

export type TokenParams = Record<string, string | undefined>;

/**
 * A grant's outcome. Failures that changed state (a replay, a code burnt by a failed check)
 * commit their change before the error is answered.
 */
type Grant = { tokens: TokenResponse } | { replayOf: string; description: string } | { refused: OAuthError };

/**
 * The token endpoint (spec 4.1, 3.3, 7.3), for an authenticated client. A replayed code or
 * refresh token revokes the whole grant in its own transaction: the failed request must not
 * roll the revocation back.
 */
export async function grantTokens(uow: UnitOfWork<OAuthStores>, deps: OAuthDeps, client: OAuthClient, params: TokenParams): Promise<TokenResponse> {
  const grantType = params.grant_type;
  if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }
  if (!client.grantTypes.includes(grantType)) throw new OAuthError('unauthorized_client', `the client did not register the ${grantType} grant`);
  const grant = await uow.transaction((stores) =>
    grantType === 'authorization_code' ? exchangeCode(stores, deps, client, params) : refresh(stores, deps, client, params),
  );
  if ('tokens' in grant) return grant.tokens;
  if ('refused' in grant) throw grant.refused;
  await uow.transaction((stores) => stores.oauth.revokeGrant(grant.replayOf, deps.clock.now()));
  throw new OAuthError('invalid_grant', grant.description);
}

async function exchangeCode(stores: OAuthStores, deps: OAuthDeps, client: OAuthClient, params: TokenParams): Promise<Grant> {
  const { code: presented, redirect_uri: redirectUri, code_verifier: verifier } = params;
  if (!presented) throw new OAuthError('invalid_request', 'code is required');
  if (!redirectUri) throw new OAuthError('invalid_request', 'redirect_uri is required');
  if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 unreserved characters');

  const now = deps.clock.now();
  const code = await stores.oauth.findCode(hashSecret(presented));
  if (!code || code.clientId !== client.id) throw new OAuthError('invalid_grant', 'the code is unknown or belongs to another client');
  // A second use means the code leaked: everything issued from this grant dies (3.3).
  const replayed = { replayOf: code.consentId, description: 'the code was already used; every token of this grant is revoked' };
  if (codeState(code) === 'EXCHANGED') return replayed;
  if (code.expiresAt.getTime() <= now.getTime()) throw new OAuthError('invalid_grant', 'the code expired (60 seconds)');
  // Burnt before the checks below, so a wrong verifier cannot be retried against the same code.
  if (!(await stores.oauth.useCode(code.hash, now))) return replayed;
  const refuse = (code: 'invalid_grant' | 'invalid_target', description: string): Grant => ({ refused: new OAuthError(code, description) });
  if (code.redirectUri !== redirectUri) return refuse('invalid_grant', 'redirect_uri differs from the one of the authorization request');
  if (base64url(sha256(new TextEncoder().encode(verifier))) !== code.codeChallenge) {
    return refuse('invalid_grant', 'code_verifier does not match the code_challenge');
  }
  let resource = code.resource;
  if (params.resource !== undefined) {
    const problem = resourceProblem(params.resource, deps.issuer);
    if (problem) return refuse('invalid_target', problem);
    if (!narrowsResource(code.resource, params.resource)) return refuse('invalid_target', 'resource differs from the one authorized');
    resource = params.resource;
  }
  const consent = await stores.oauth.getConsent(code.consentId);
  if (!consent) return refuse('invalid_grant', 'the approval behind this code was withdrawn');
  return { tokens: await issueTokens(stores, deps, client, { consentId: consent.id, userId: consent.userId, workspaceId: consent.workspaceId, scopes: code.scopes, resource }) };
}

/** Rotation: the presented refresh token dies and a new pair is issued; a replay revokes the grant. */
async function refresh(stores: OAuthStores, deps: OAuthDeps, client: OAuthClient, params: TokenParams): Promise<Grant> {
  const presented = params.refresh_token;
  if (!presented) throw new OAuthError('invalid_request', 'refresh_token is required');
  const now = deps.clock.now();
  const token = await stores.oauth.findToken(hashSecret(presented));
  if (!token || token.kind !== 'REFRESH' || token.clientId !== client.id) throw new OAuthError('invalid_grant', 'the refresh token is unknown or belongs to another client');
  const replayed = { replayOf: token.consentId, description: 'the refresh token was already used; every token of this grant is revoked' };
  if (token.state === 'ROTATED') return replayed;
  if (!tokenAlive(token, now)) throw new OAuthError('invalid_grant', 'the refresh token expired or was revoked');

  let scopes = token.scopes;
  if (params.scope !== undefined) {
    const asked = requestableScopes(splitScope(params.scope), (d) => new OAuthError('invalid_scope', d));
    const wider = asked.filter((s) => !token.scopes.includes(s));
    if (wider.length > 0) throw new OAuthError('invalid_scope', `a refresh cannot widen the scope: ${wider.join(' ')}`);
    if (asked.length > 0) scopes = asked;
  }
  let resource = token.resource;
  if (params.resource !== undefined) {
    const problem = resourceProblem(params.resource, deps.issuer);
    if (problem) throw new OAuthError('invalid_target', problem);
    if (!narrowsResource(token.resource, params.resource)) throw new OAuthError('invalid_target', 'a refresh cannot widen the resource');
    resource = params.resource;
  }
  // Step-up (core/oauth/step-up.ts): a refresh right after a scope challenge it cannot answer is
  // refused once, so the client asks the person instead of renewing the narrower scope.
  const lacking = await unansweredChallenge(stores, deps, token.consentId, scopes);
  if (lacking.length > 0) {
    return {
      refused: new OAuthError('invalid_grant', `this grant lacks the scope ${lacking.join(' ')}, which the app was just refused for; a refresh cannot add it: send the person to the authorization endpoint (this refresh token stays valid)`),
    };
  }
  if (!(await stores.oauth.rotateToken(token.id))) return replayed;
  return { tokens: await issueTokens(stores, deps, client, { consentId: token.consentId, userId: token.userId, workspaceId: token.workspaceId, scopes, resource }) };
}

async function issueTokens(
  stores: OAuthStores,
  deps: OAuthDeps,
  client: OAuthClient,
  grant: { consentId: string; userId: string; workspaceId: string; scopes: Scope[]; resource: string | null },
): Promise<TokenResponse> {
  const expires = client.expireAccessTokens;
  const access = `${ACCESS_TOKEN_PREFIX}${base64url(deps.random.bytes(32))}`;
  await stores.oauth.insertToken(tokenRecord(deps, client, grant, 'ACCESS', access, expires ? ACCESS_TOKEN_TTL_SECONDS : null));
  const response: TokenResponse = { access_token: access, token_type: 'Bearer', scope: joinScopes(grant.scopes) };
  if (!expires) return response;
  response.expires_in = ACCESS_TOKEN_TTL_SECONDS;
  if (client.grantTypes.includes('refresh_token')) {
    const refreshToken = `${REFRESH_TOKEN_PREFIX}${base64url(deps.random.bytes(32))}`;
    await stores.oauth.insertToken(tokenRecord(deps, client, grant, 'REFRESH', refreshToken, REFRESH_TOKEN_TTL_SECONDS));
    response.refresh_token = refreshToken;
  }
  return response;
}

function tokenRecord(
  deps: OAuthDeps,
  client: OAuthClient,
  grant: { consentId: string; userId: string; workspaceId: string; scopes: Scope[]; resource: string | null },
  kind: IssuedToken['kind'],
  secret: string,
  ttlSeconds: number | null,
): IssuedToken {
  const now = deps.clock.now();
  return {
    id: deps.ids.next(),
    hash: hashSecret(secret),
    kind,
    state: 'ACTIVE',
    clientId: client.id,
    ...grant,
    createdAt: now,
    expiresAt: ttlSeconds === null ? null : new Date(now.getTime() + ttlSeconds * 1000),
  };
}

/**
 * RFC 7009: 200 for any input, an unknown token included. A client can only revoke its own
 * tokens; revoking a refresh token ends the whole grant it belongs to.
 */
export async function revokeToken(stores: OAuthStores, deps: OAuthDeps, client: OAuthClient, params: TokenParams): Promise<void> {
  if (!params.token) throw new OAuthError('invalid_request', 'token is required');
  const token = await stores.oauth.findToken(hashSecret(params.token));
  if (!token || token.clientId !== client.id) return;
  if (token.kind === 'REFRESH') await stores.oauth.revokeGrant(token.consentId, deps.clock.now());
  else await stores.oauth.revokeToken(token.id);
}

/** RFC 7662. A client learns about its own live tokens only; anything else is `{ active: false }`. */
export async function introspectToken(stores: OAuthStores, deps: OAuthDeps, client: OAuthClient, params: TokenParams): Promise<Record<string, unknown>> {
  if (!params.token) throw new OAuthError('invalid_request', 'token is required');
  const token = await stores.oauth.findToken(hashSecret(params.token));
  if (!token || token.clientId !== client.id || !tokenAlive(token, deps.clock.now())) return { active: false };
  const user = await stores.identity.getUser(token.userId);
  return {
    active: true,
    scope: joinScopes(token.scopes),
    client_id: token.clientId,
    token_type: token.kind === 'ACCESS' ? 'Bearer' : 'refresh_token',
    iat: Math.floor(token.createdAt.getTime() / 1000),
    ...(token.expiresAt ? { exp: Math.floor(token.expiresAt.getTime() / 1000) } : {}),
    sub: token.userId,
    ...(user ? { username: user.email } : {}),
    iss: deps.issuer,
    ...(token.resource ? { aud: token.resource } : {}),
    workspace_id: token.workspaceId,
  };
}
