import { DomainError } from '../shared/errors.ts';
import type { Role } from '../identity/roles.ts';
import { base64url, hashSecret } from '../tokens/secret.ts';
import { CODE_TTL_SECONDS, pendingState, PENDING_REQUEST_TTL_SECONDS, type Consent, type PendingRequest } from './artefacts.ts';
import { displayName, requestableScopes, type OAuthClient } from './clients.ts';
import { OAuthError, type OAuthErrorCode } from './errors.ts';
import { resourceProblem } from './resource.ts';
import { DEFAULT_SCOPE, SCOPE_DESCRIPTIONS, splitScope, type Scope } from './scopes.ts';
import type { OAuthDeps, OAuthStores } from './store.ts';

/** Query parameters as they arrive: a repeated parameter is an array. */
export type AuthorizeParams = Record<string, string | string[] | undefined>;

/** Where the browser goes next. `GET /v3/oauth/authorize` always answers with a 302 (4.1). */
export type AuthorizeOutcome =
  | { next: 'redirect'; location: string }
  | { next: 'sign-in'; requestId: string }
  | { next: 'consent'; requestId: string };

/**
 * The authorize endpoint (spec 4.1, 7.4). Until the client and its redirect URI are known good,
 * errors are thrown (a JSON body: no open redirect); after that every error goes back to the
 * client on its redirect URI with `state` and `iss`.
 */
export async function startAuthorization(
  stores: OAuthStores,
  deps: OAuthDeps,
  params: AuthorizeParams,
  signedInUserId: string | undefined,
): Promise<AuthorizeOutcome> {
  const { client, redirectUri } = await trustedClient(stores, params);
  const state = single(params.state) ?? null;
  const fail = (code: OAuthErrorCode, description: string): AuthorizeOutcome => ({
    next: 'redirect',
    location: errorRedirect(deps, redirectUri, state, code, description),
  });

  for (const [name, value] of Object.entries(params)) {
    if (Array.isArray(value)) return fail('invalid_request', `the parameter ${name} must not be repeated`);
  }
  const responseType = single(params.response_type);
  if (!responseType) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') return fail('unsupported_response_type', 'only response_type=code is supported');
  if (!client.grantTypes.includes('authorization_code')) return fail('unauthorized_client', 'the client did not register the authorization_code grant');

  const challenge = single(params.code_challenge);
  const method = single(params.code_challenge_method);
  if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE is mandatory)');
  if (!method) return fail('invalid_request', 'code_challenge_method=S256 is required');
  if (method !== 'S256') return fail('invalid_request', 'only code_challenge_method=S256 is supported; plain is not');
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters)');

  let scopes: Scope[];
  try {
    const named = splitScope(single(params.scope));
    scopes = requestableScopes(named.length > 0 ? named : [DEFAULT_SCOPE], (d) => new OAuthError('invalid_scope', d));
  } catch (error) {
    return fail('invalid_scope', (error as OAuthError).description);
  }
  const outside = scopes.filter((s) => !client.scopes.includes(s));
  if (outside.length > 0) return fail('invalid_scope', `the client may not request: ${outside.join(' ')}`);

  const resource = single(params.resource) ?? null;
  if (resource !== null) {
    const problem = resourceProblem(resource, deps.issuer);
    if (problem) return fail('invalid_target', problem);
  }

  const prompt = single(params.prompt) ?? null;
  if (prompt !== null && prompt !== 'consent' && prompt !== 'none') return fail('invalid_request', 'prompt may only be consent or none');

  const now = deps.clock.now();
  const pending: PendingRequest = {
    id: deps.ids.next(),
    clientId: client.id,
    redirectUri,
    scopes,
    state,
    codeChallenge: challenge,
    resource,
    prompt,
    createdAt: now,
    expiresAt: new Date(now.getTime() + PENDING_REQUEST_TTL_SECONDS * 1000),
    decidedAt: null,
  };

  if (prompt === 'none' && !signedInUserId) return fail('login_required', 'nobody is signed in and prompt=none forbids asking');
  const standing = signedInUserId && prompt !== 'consent' ? await standingConsent(stores, client, signedInUserId, scopes) : undefined;
  if (prompt === 'none' && !standing) return fail('consent_required', 'the app has no approval covering these scopes and prompt=none forbids asking');

  await stores.oauth.insertPending(pending);
  if (standing) {
    await stores.oauth.decidePending(pending.id, now);
    return { next: 'redirect', location: await issueCode(stores, deps, pending, standing, scopes) };
  }
  return signedInUserId ? { next: 'consent', requestId: pending.id } : { next: 'sign-in', requestId: pending.id };
}

/** What the consent screen shows (spec 5.3). */
export interface ConsentScreen {
  requestId: string;
  client: {
    name: string;
    logoUri: string | null;
    clientUri: string | null;
    verified: boolean;
    selfRegistered: boolean;
    /** The host serving the client's Client ID Metadata Document: the one fact about the app that is checked. */
    metadataDocumentHost: string | null;
  };
  workspaces: { id: string; name: string; isPersonal: boolean }[];
  scopes: { scope: Scope; description: string; required: boolean; checked: boolean; granted: boolean }[];
  /** Step-up: the app already holds an approval of this person (the latest one); the screen asks for what it adds. */
  standing: { workspaceId: string; workspaceName: string } | null;
}

export async function consentScreen(stores: OAuthStores, deps: OAuthDeps, requestId: string, userId: string): Promise<ConsentScreen> {
  const pending = await livePending(stores, deps, requestId);
  const client = await stores.oauth.findClient(pending.clientId);
  if (!client) throw new DomainError('invalid_input', 'This app no longer exists');
  const workspaces = (await stores.identity.listWorkspacesOf(userId))
    .filter((w) => mayAuthorize(w.roles))
    .sort((a, b) => Number(b.isPersonal) - Number(a.isPersonal))
    .map((w) => ({ id: w.id, name: w.name, isPersonal: w.isPersonal }));
  // A client coming back for more (step-up) finds the approval it holds; the latest if several.
  const latest = (await stores.oauth.consentsOf(client.id, userId))
    .filter((c) => workspaces.some((w) => w.id === c.workspaceId))
    .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())[0];
  return {
    requestId,
    client: {
      name: displayName(client),
      logoUri: client.logoUri,
      clientUri: client.clientUri,
      verified: client.verified,
      selfRegistered: client.registration !== 'DASHBOARD',
      metadataDocumentHost: client.registration === 'METADATA_DOCUMENT' ? new URL(client.id).host : null,
    },
    workspaces,
    scopes: pending.scopes.map((scope) => ({
      scope,
      description: SCOPE_DESCRIPTIONS[scope],
      required: client.requiredScopes.includes(scope),
      checked: true,
      granted: latest?.scopes.includes(scope) ?? false,
    })),
    standing: latest ? { workspaceId: latest.workspaceId, workspaceName: workspaces.find((w) => w.id === latest.workspaceId)!.name } : null,
  };
}

export interface Decision {
  requestId: string;
  userId: string;
  approve: boolean;
  /** Empty or absent: the person's personal account. */
  workspaceId?: string;
  scopes: string[];
}

/**
 * The person's answer on the consent screen: a redirect to the client with a code, or with
 * `access_denied`. A request is answered once; an expired one goes back as `invalid_request`.
 */
export async function decide(stores: OAuthStores, deps: OAuthDeps, decision: Decision): Promise<string> {
  const now = deps.clock.now();
  const pending = await stores.oauth.findPending(decision.requestId);
  if (!pending) throw new DomainError('invalid_input', 'This authorization request does not exist');
  const state = pendingState(pending, now);
  if (state === 'DECIDED') throw new DomainError('invalid_input', 'This authorization request was already answered');
  const fail = (code: OAuthErrorCode, description: string) => errorRedirect(deps, pending.redirectUri, pending.state, code, description);
  // Not `access_denied` (7.4: a refusal, "no retry"): nobody refused, and starting again works. The
  // redirect URI was checked when the request was made, so sending the error there is safe.
  if (state === 'EXPIRED') return fail('invalid_request', 'authorization request expired: it was not answered within 10 minutes; start again');
  if (!(await stores.oauth.decidePending(pending.id, now))) throw new DomainError('invalid_input', 'This authorization request was already answered');
  const client = await stores.oauth.findClient(pending.clientId);
  if (!client) throw new DomainError('invalid_input', 'This app no longer exists');

  if (!decision.approve) return fail('access_denied', 'the person refused the authorization');

  const workspaces = await stores.identity.listWorkspacesOf(decision.userId);
  const workspace = decision.workspaceId ? workspaces.find((w) => w.id === decision.workspaceId) : workspaces.find((w) => w.isPersonal);
  if (!workspace || !mayAuthorize(workspace.roles)) {
    return fail('access_denied', 'only an Owner or Admin can authorize an app for this workspace');
  }
  const approved = pending.scopes.filter((s) => decision.scopes.includes(s));
  const dropped = client.requiredScopes.filter((s) => pending.scopes.includes(s) && !approved.includes(s));
  if (dropped.length > 0) return fail('access_denied', `the app requires the scope ${dropped.join(' ')}, which was not approved`);
  if (approved.length === 0) return fail('access_denied', 'no scope was approved');

  const consent = await recordConsent(stores, deps, client, decision.userId, workspace.id, approved);
  return issueCode(stores, deps, pending, consent, approved);
}

/**
 * Re-approval with fewer scopes revokes everything issued under the old approval (3.3); the
 * consent then holds exactly what was approved this time.
 */
async function recordConsent(stores: OAuthStores, deps: OAuthDeps, client: OAuthClient, userId: string, workspaceId: string, scopes: Scope[]): Promise<Consent> {
  const now = deps.clock.now();
  const existing = await stores.oauth.findConsent(client.id, userId, workspaceId);
  if (!existing) {
    const consent: Consent = { id: deps.ids.next(), clientId: client.id, userId, workspaceId, scopes, createdAt: now, updatedAt: now };
    await stores.oauth.insertConsent(consent);
    return consent;
  }
  if (existing.scopes.some((s) => !scopes.includes(s))) await stores.oauth.revokeGrant(existing.id, now);
  await stores.oauth.updateConsentScopes(existing.id, scopes, now);
  return { ...existing, scopes, updatedAt: now };
}

async function issueCode(stores: OAuthStores, deps: OAuthDeps, pending: PendingRequest, consent: Consent, scopes: Scope[]): Promise<string> {
  const code = base64url(deps.random.bytes(32));
  const now = deps.clock.now();
  await stores.oauth.insertCode({
    hash: hashSecret(code),
    consentId: consent.id,
    clientId: pending.clientId,
    redirectUri: pending.redirectUri,
    codeChallenge: pending.codeChallenge,
    scopes,
    resource: pending.resource,
    createdAt: now,
    expiresAt: new Date(now.getTime() + CODE_TTL_SECONDS * 1000),
    usedAt: null,
  });
  return withQuery(pending.redirectUri, { code, state: pending.state, iss: deps.issuer });
}

/** An earlier approval that already covers the request, when there is exactly one. */
async function standingConsent(stores: OAuthStores, client: OAuthClient, userId: string, scopes: Scope[]): Promise<Consent | undefined> {
  const workspaces = await stores.identity.listWorkspacesOf(userId);
  const covering = (await stores.oauth.consentsOf(client.id, userId)).filter(
    (c) => scopes.every((s) => c.scopes.includes(s)) && mayAuthorize(workspaces.find((w) => w.id === c.workspaceId)?.roles ?? []),
  );
  return covering.length === 1 ? covering[0] : undefined;
}

async function trustedClient(stores: OAuthStores, params: AuthorizeParams): Promise<{ client: OAuthClient; redirectUri: string }> {
  if (Array.isArray(params.client_id)) throw new OAuthError('invalid_request', 'client_id must not be repeated');
  if (Array.isArray(params.redirect_uri)) throw new OAuthError('invalid_request', 'redirect_uri must not be repeated');
  const clientId = params.client_id;
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required');
  const client = await stores.oauth.findClient(clientId);
  if (!client) throw new OAuthError('invalid_client', 'unknown client_id');
  const named = params.redirect_uri;
  if (named === undefined || named === '') {
    if (client.redirectUris.length !== 1) throw new OAuthError('invalid_request', 'redirect_uri is required: the client registered more than one');
    return { client, redirectUri: client.redirectUris[0]! };
  }
  if (!client.redirectUris.includes(named)) throw new OAuthError('invalid_redirect_uri', 'redirect_uri does not exactly match a registered redirect URI');
  return { client, redirectUri: named };
}

async function livePending(stores: OAuthStores, deps: OAuthDeps, requestId: string): Promise<PendingRequest> {
  const pending = await stores.oauth.findPending(requestId);
  if (!pending) throw new DomainError('invalid_input', 'This authorization request does not exist');
  const state = pendingState(pending, deps.clock.now());
  if (state === 'DECIDED') throw new DomainError('invalid_input', 'This authorization request was already answered');
  if (state === 'EXPIRED') throw new DomainError('invalid_input', 'This authorization request expired; go back to the app and start again');
  return pending;
}

/** Only an Owner or Admin can authorize an application for a workspace (4.1). */
export function mayAuthorize(roles: readonly Role[]): boolean {
  return roles.includes('OWNER') || roles.includes('ADMIN');
}

function errorRedirect(deps: OAuthDeps, redirectUri: string, state: string | null, code: OAuthErrorCode, description: string): string {
  return withQuery(redirectUri, { error: code, error_description: description, state, iss: deps.issuer });
}

function withQuery(uri: string, params: Record<string, string | null>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(params)) if (value !== null) url.searchParams.set(key, value);
  return url.toString();
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value === '' ? undefined : value;
}
