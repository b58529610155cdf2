import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { excerpt, notFound } from '../shared/errors.ts';
import { base64url, hashSecret } from '../tokens/secret.ts';
import { OAuthError } from './errors.ts';
import { redirectUriProblem, webUrlProblem } from './redirect-uri.ts';
import { isScope, joinScopes, SCOPES, splitScope, UNREQUESTABLE_SCOPES, type Scope } from './scopes.ts';
import type { OAuthDeps, OAuthStores } from './store.ts';
import { AUTH_METHODS, DEFAULT_CLIENT_NAME, GRANT_TYPES, MAX_CLIENT_NAME, MAX_REDIRECT_URIS, type AuthMethod, type GrantType, type OAuthClient } from './client.ts';

export { DEFAULT_CLIENT_NAME, type OAuthClient } from './client.ts';

/** RFC 7591 client information response (spec 2.5). */
export interface ClientInformation {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: number;
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  redirect_uris: string[];
  grant_types: GrantType[];
  response_types: ['code'];
  token_endpoint_auth_method: AuthMethod;
  scope: string;
}

/** Dynamic client registration (RFC 7591, spec 4.1). */
export async function registerClient(stores: OAuthStores, deps: OAuthDeps, metadata: Record<string, unknown>): Promise<ClientInformation> {
  if (!deps.dynamicRegistration) throw new OAuthError('invalid_client_metadata', 'Dynamic client registration is disabled on this server');
  const valid = validateClientMetadata(metadata);
  return issueClient(stores, deps, valid, { registration: 'DYNAMIC', expireAccessTokens: true, requiredScopes: [], workspaceId: null, createdBy: null });
}

/** A client created by an Owner or Admin of a workspace, with the settings only the dashboard has. */
export async function createDashboardClient(
  stores: OAuthStores,
  deps: OAuthDeps,
  actor: Actor,
  metadata: Record<string, unknown>,
  settings: { expireAccessTokens?: boolean; requiredScopes?: string[] },
): Promise<ClientInformation> {
  authorize(actor.roles, 'tokens', 'write');
  const valid = validateClientMetadata(metadata);
  const requiredScopes = validRequiredScopes(settings.requiredScopes ?? [], valid.scopes);
  return issueClient(stores, deps, valid, {
    registration: 'DASHBOARD',
    expireAccessTokens: settings.expireAccessTokens ?? true,
    requiredScopes,
    workspaceId: actor.workspaceId,
    createdBy: actor.userId,
  });
}

export async function listDashboardClients(stores: OAuthStores, actor: Actor): Promise<OAuthClient[]> {
  authorize(actor.roles, 'tokens', 'read');
  return stores.oauth.listClientsOf(actor.workspaceId);
}

export async function getDashboardClient(stores: OAuthStores, actor: Actor, clientId: string): Promise<OAuthClient> {
  authorize(actor.roles, 'tokens', 'read');
  const client = await stores.oauth.findClient(clientId);
  if (!client || client.workspaceId !== actor.workspaceId) throw notFound(`OAuth client ${clientId} not found`);
  return client;
}

/** Changing expiry affects only tokens issued from now on (section 8). */
export async function updateDashboardClient(
  stores: OAuthStores,
  actor: Actor,
  clientId: string,
  patch: { expireAccessTokens?: boolean; requiredScopes?: string[]; name?: string | null },
): Promise<OAuthClient> {
  authorize(actor.roles, 'tokens', 'write');
  const client = await getDashboardClient(stores, actor, clientId);
  const next: OAuthClient = {
    ...client,
    expireAccessTokens: patch.expireAccessTokens ?? client.expireAccessTokens,
    requiredScopes: patch.requiredScopes ? validRequiredScopes(patch.requiredScopes, client.scopes) : client.requiredScopes,
    name: patch.name === undefined ? client.name : patch.name,
  };
  await stores.oauth.updateClient(next);
  return next;
}

/** Deleting a client cuts off every consent and token it holds. */
export async function deleteDashboardClient(stores: OAuthStores, actor: Actor, clientId: string): Promise<void> {
  authorize(actor.roles, 'tokens', 'write');
  await getDashboardClient(stores, actor, clientId);
  await stores.oauth.deleteClient(clientId);
}

/** Platform operator only (CLI): the verified badge. */
export async function setClientVerified(stores: OAuthStores, clientId: string, verified: boolean): Promise<OAuthClient> {
  const client = await stores.oauth.findClient(clientId);
  if (!client) throw notFound(`OAuth client ${clientId} not found`);
  const next = { ...client, verified };
  await stores.oauth.updateClient(next);
  return next;
}

export function clientInformation(client: OAuthClient, secret?: string): ClientInformation {
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    ...(client.name !== null ? { client_name: client.name } : {}),
    ...(client.clientUri !== null ? { client_uri: client.clientUri } : {}),
    ...(client.logoUri !== null ? { logo_uri: client.logoUri } : {}),
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: client.authMethod,
    scope: joinScopes(client.scopes),
  };
}

export function displayName(client: OAuthClient): string {
  return client.name?.trim() || DEFAULT_CLIENT_NAME;
}

/** The client's own fields that its registration metadata sets. */
type ValidMetadata = Pick<OAuthClient, 'name' | 'clientUri' | 'logoUri' | 'redirectUris' | 'grantTypes' | 'scopes' | 'authMethod'>;

/** Every rule of the registration table of spec 4.1; the first broken rule answers. */
export function validateClientMetadata(m: Record<string, unknown>): ValidMetadata {
  const metadataError = (description: string) => new OAuthError('invalid_client_metadata', description);

  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length < 1 || uris.length > MAX_REDIRECT_URIS) {
    throw new OAuthError('invalid_redirect_uri', `redirect_uris must be an array of 1 to ${MAX_REDIRECT_URIS} URIs`);
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uri ${JSON.stringify(typeof uri === 'string' ? excerpt(uri, 200) : uri)} ${problem}`);
  }

  const name = optionalString(m, 'client_name', metadataError);
  // Characters, not UTF-16 code units: 255 emoji are 255 characters.
  if (name !== null && [...name].length > MAX_CLIENT_NAME) throw metadataError(`client_name must be at most ${MAX_CLIENT_NAME} characters`);
  const clientUri = optionalUrl(m, 'client_uri', metadataError);
  const logoUri = optionalUrl(m, 'logo_uri', metadataError);
  optionalString(m, 'software_id', metadataError);
  optionalString(m, 'software_version', metadataError);

  let scopes: Scope[] = [...SCOPES];
  if (m.scope !== undefined) {
    if (typeof m.scope !== 'string') throw metadataError('scope must be a space-separated string');
    scopes = requestableScopes(splitScope(m.scope), (description) => new OAuthError('invalid_scope', description));
    if (scopes.length === 0) throw new OAuthError('invalid_scope', 'scope names no scope');
  }

  let grantTypes: GrantType[] = ['authorization_code'];
  if (m.grant_types !== undefined) {
    if (!Array.isArray(m.grant_types) || m.grant_types.length === 0) throw metadataError('grant_types must be a non-empty array');
    for (const grant of m.grant_types) {
      if (!(GRANT_TYPES as readonly unknown[]).includes(grant)) throw metadataError(`grant_types: ${JSON.stringify(typeof grant === 'string' ? excerpt(grant) : grant)} is not supported (authorization_code, refresh_token)`);
    }
    grantTypes = GRANT_TYPES.filter((g) => (m.grant_types as unknown[]).includes(g));
    if (!grantTypes.includes('authorization_code')) throw metadataError('grant_types must include authorization_code');
  }

  if (m.response_types !== undefined) {
    if (!Array.isArray(m.response_types) || m.response_types.length === 0 || m.response_types.some((r) => r !== 'code')) {
      throw metadataError('response_types may only be ["code"]');
    }
  }

  let authMethod: AuthMethod = 'client_secret_basic';
  if (m.token_endpoint_auth_method !== undefined) {
    if (!(AUTH_METHODS as readonly unknown[]).includes(m.token_endpoint_auth_method)) {
      throw metadataError('token_endpoint_auth_method must be none, client_secret_basic or client_secret_post');
    }
    authMethod = m.token_endpoint_auth_method as AuthMethod;
  }

  return { name, clientUri, logoUri, redirectUris: [...new Set(uris as string[])], grantTypes, scopes, authMethod };
}

/** Known, requestable scopes only: `legacy` and unknown names are refused. */
export function requestableScopes(names: string[], fail: (description: string) => Error): Scope[] {
  for (const name of names) {
    if ((UNREQUESTABLE_SCOPES as readonly string[]).includes(name)) throw fail(`the scope "${excerpt(name)}" cannot be requested`);
    if (!isScope(name)) throw fail(`unknown scope "${excerpt(name)}"`);
  }
  return names as Scope[];
}

function validRequiredScopes(names: string[], ceiling: Scope[]): Scope[] {
  const scopes = requestableScopes([...new Set(names)], (d) => new OAuthError('invalid_scope', `requiredScopes: ${d}`));
  const outside = scopes.filter((s) => !ceiling.includes(s));
  if (outside.length > 0) throw new OAuthError('invalid_scope', `requiredScopes must be within the client's scope; not: ${outside.join(' ')}`);
  return scopes;
}

async function issueClient(
  stores: OAuthStores,
  deps: OAuthDeps,
  valid: ValidMetadata,
  settings: Pick<OAuthClient, 'registration' | 'expireAccessTokens' | 'requiredScopes' | 'workspaceId' | 'createdBy'>,
): Promise<ClientInformation> {
  const secret = valid.authMethod === 'none' ? undefined : `sbcs_${base64url(deps.random.bytes(32))}`;
  const client: OAuthClient = {
    id: deps.ids.next(),
    secretHash: secret ? hashSecret(secret) : null,
    ...valid,
    verified: false,
    createdAt: deps.clock.now(),
    metadataExpiresAt: null,
    ...settings,
  };
  await stores.oauth.insertClient(client);
  return clientInformation(client, secret);
}

function optionalString(m: Record<string, unknown>, field: string, fail: (d: string) => Error): string | null {
  const value = m[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw fail(`${field} must be a string`);
  return value;
}

function optionalUrl(m: Record<string, unknown>, field: string, fail: (d: string) => Error): string | null {
  const value = optionalString(m, field, fail);
  if (value === null) return null;
  const problem = webUrlProblem(value);
  if (problem) throw fail(`${field} ${problem}`);
  return value;
}
