import { excerpt } from '../shared/errors.ts';
import type { OAuthClient } from './client.ts';
import { validateClientMetadata } from './clients.ts';
import { OAuthError, type OAuthErrorKind } from './errors.ts';
import type { OAuthDeps, OAuthStores } from './store.ts';
import { MetadataDocumentUnavailable } from './metadata-document-port.ts';

export { MetadataDocumentUnavailable, type ClientMetadataDocuments } from './metadata-document-port.ts';

/**
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client
 * names itself by the https URL of a JSON document holding its metadata, instead of registering.
 * The service fetches the document (through the outbound policy), checks it, and keeps a copy
 * for as long as its `Cache-Control` says, within bounds.
 */
/** A copy is kept at least 5 minutes (fewer fetches) and at most 24 hours (changes reach us). */
export const METADATA_CACHE_MIN_SECONDS = 300;
export const METADATA_CACHE_MAX_SECONDS = 24 * 3600;
/** Recommended by the draft: a metadata document is small. */
export const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;

/** A `client_id` that names a metadata document rather than a registered client. */
export function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

export function cacheSeconds(maxAge: number | undefined): number {
  if (maxAge === undefined || !Number.isFinite(maxAge)) return METADATA_CACHE_MIN_SECONDS;
  return Math.min(METADATA_CACHE_MAX_SECONDS, Math.max(METADATA_CACHE_MIN_SECONDS, Math.floor(maxAge)));
}

/** Why this URL cannot be a client_id (draft section 3), or undefined. */
export function clientIdUrlProblem(clientId: string, allowsHttp: (url: URL) => boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowsHttp(url))) return 'must be an https URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.hash || clientId.includes('#')) return 'must not contain a fragment';
  if (url.pathname === '/' || url.pathname === '') return 'must have a path';
  // The parser removes dot segments; a URL that is not already in its parsed form had some (or odd spelling).
  if (url.href !== clientId) return `must be written in its normal form (${excerpt(url.href, 200)}), without "." or ".." segments`;
  return undefined;
}

/**
 * The client behind a metadata-document `client_id`, fetched when there is no fresh copy. Called
 * before the authorize and token work (outside their transactions: the fetch may take seconds).
 * Any problem is `invalid_client` with a description saying what is wrong with the document, of
 * `kind`: invalid input at the authorization endpoint, a failed client authentication at the token endpoint.
 * Other client ids are left alone.
 */
export async function ensureMetadataDocumentClient(stores: OAuthStores, deps: OAuthDeps, clientId: string | undefined, kind: OAuthErrorKind): Promise<void> {
  const documents = deps.metadataDocuments;
  if (!documents || !clientId || !isMetadataDocumentClientId(clientId)) return;
  const invalid = (description: string) => new OAuthError('invalid_client', description, kind);
  const now = deps.clock.now();
  const stored = await stores.oauth.findClient(clientId);
  if (stored?.metadataExpiresAt && stored.metadataExpiresAt.getTime() > now.getTime()) return;

  const problem = clientIdUrlProblem(clientId, (url) => documents.allowsHttp(url));
  if (problem) throw invalid(`the client_id URL ${problem} (Client ID Metadata Document)`);
  let fetched: { body: unknown; maxAgeSeconds: number | undefined };
  try {
    fetched = await documents.load(clientId);
  } catch (error) {
    if (!(error instanceof MetadataDocumentUnavailable)) throw error;
    throw invalid(`the client's metadata document could not be fetched: ${error.message}`);
  }
  const valid = validMetadataDocument(clientId, fetched.body, invalid);
  const client: OAuthClient = {
    id: clientId,
    secretHash: null,
    ...valid,
    // A metadata document names no secret: the client is public whatever it says.
    authMethod: 'none',
    requiredScopes: [],
    expireAccessTokens: true,
    // Keeps an operator's verified badge across re-fetches.
    verified: stored?.verified ?? false,
    registration: 'METADATA_DOCUMENT',
    workspaceId: null,
    createdBy: null,
    createdAt: stored?.createdAt ?? now,
    metadataExpiresAt: new Date(now.getTime() + cacheSeconds(fetched.maxAgeSeconds) * 1000),
  };
  await stores.oauth.saveClient(client);
}

/**
 * The registration rules of spec 4.1 plus the draft's: the document names itself (`client_id`
 * equals its URL) and holds no secret. Only public clients (`none`, proving themselves with PKCE)
 * are accepted: `private_key_jwt` is not supported here, and shared secrets cannot be published.
 */
function validMetadataDocument(clientId: string, body: unknown, invalid: (d: string) => OAuthError) {
  const bad = (d: string) => invalid(`the client's metadata document is invalid: ${d}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('it must be a JSON object');
  const m = body as Record<string, unknown>;
  if (m.client_id !== clientId) throw bad('its client_id must equal the URL it is served from');
  if (m.client_secret !== undefined || m.client_secret_expires_at !== undefined) throw bad('it must not contain a client secret');
  const method = m.token_endpoint_auth_method ?? 'none';
  if (method !== 'none') throw bad(`token_endpoint_auth_method must be none (a public client using PKCE); ${JSON.stringify(typeof method === 'string' ? excerpt(method, 40) : method)} is not supported`);
  try {
    return validateClientMetadata({ ...m, token_endpoint_auth_method: 'none' });
  } catch (error) {
    if (error instanceof OAuthError) throw bad(error.description);
    throw error;
  }
}
