import { t } from 'elysia';
import { SCOPES } from '../../../core/oauth/scopes.ts';
import { OneOf, StandardError } from '../schemas.ts';

/**
 * OpenAPI descriptions of the OAuth endpoints. They read their own bodies (form-urlencoded or
 * JSON) to answer every failure in the OAuth shape, so their schemas are written here rather
 * than given to Elysia as validators.
 */
export const OAuthErrorBody = t.Object({ error: t.String(), error_description: t.String() }, { description: 'Spec 7.2 shape 3: exactly these two fields' });

const oauthErrors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), { description: `OAuth error (spec 7.3)`, content: { 'application/json': { schema: OAuthErrorBody } } }]));
const tooMany = { '429': { description: 'Rate limited (section 8); standard error shape with Retry-After', content: { 'application/json': { schema: StandardError } } } };
const json = (description: string, schema: object) => ({ description, content: { 'application/json': { schema } } });
const formOrJson = (schema: object) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } },
});

const ClientMetadata = t.Object({
  redirect_uris: t.Array(t.String(), { minItems: 1, maxItems: 10, description: 'Absolute; no fragment or credentials; https, or http on loopback, or a native scheme with a dot' }),
  client_name: t.Optional(t.String({ maxLength: 255 })),
  client_uri: t.Optional(t.String()),
  logo_uri: t.Optional(t.String()),
  scope: t.Optional(t.String({ description: `Space-separated ceiling; omitted: every requestable scope (${SCOPES.join(', ')})` })),
  grant_types: t.Optional(t.Array(t.UnionEnum(['authorization_code', 'refresh_token']), { description: 'Omitted: authorization_code alone (no refresh token)' })),
  response_types: t.Optional(t.Array(t.Literal('code'))),
  token_endpoint_auth_method: t.Optional(OneOf(['none', 'client_secret_basic', 'client_secret_post'], { description: 'Omitted: a confidential client with a secret (basic)' })),
  software_id: t.Optional(t.String({ description: 'Validated, then ignored' })),
  software_version: t.Optional(t.String({ description: 'Validated, then ignored' })),
});

export const ClientInformation = t.Object({
  client_id: t.String(),
  client_id_issued_at: t.Integer(),
  client_secret: t.Optional(t.String({ description: 'Confidential clients only, in this answer only' })),
  client_secret_expires_at: t.Optional(t.Integer({ description: '0' })),
  client_name: t.Optional(t.String()),
  client_uri: t.Optional(t.String()),
  logo_uri: t.Optional(t.String()),
  redirect_uris: t.Array(t.String()),
  grant_types: t.Array(t.String()),
  response_types: t.Array(t.String()),
  token_endpoint_auth_method: t.String(),
  scope: t.String(),
});

const TokenRequest = t.Object({
  grant_type: t.UnionEnum(['authorization_code', 'refresh_token']),
  code: t.Optional(t.String()),
  redirect_uri: t.Optional(t.String()),
  code_verifier: t.Optional(t.String({ description: '43 to 128 characters; PKCE S256' })),
  refresh_token: t.Optional(t.String()),
  scope: t.Optional(t.String({ description: 'refresh_token only: narrow the scope (a refresh never widens it)' })),
  resource: t.Optional(t.String({ description: 'Narrow the audience (RFC 8707)' })),
  client_id: t.Optional(t.String({ description: 'A registered client id or a Client ID Metadata Document URL (public clients)' })),
  client_secret: t.Optional(t.String({ description: 'A confidential client sends its secret here or in HTTP Basic, either way whatever it registered; never both (invalid_request)' })),
});

const TokenResponse = t.Object({
  access_token: t.String(),
  token_type: t.Literal('Bearer'),
  expires_in: t.Optional(t.Integer({ description: '3600; absent when the client has expiry turned off' })),
  refresh_token: t.Optional(t.String({ description: 'Only for clients that registered the refresh_token grant' })),
  scope: t.String({ description: 'The approved set; authoritative' }),
});

const TokenOnly = t.Object({
  token: t.String(),
  token_type_hint: t.Optional(t.String()),
  client_id: t.Optional(t.String()),
  client_secret: t.Optional(t.String({ description: 'Here or in HTTP Basic, never both' })),
});

/** What browser-based clients (MCP Inspector, web agents) need to know: these endpoints answer CORS preflights for any origin. */
const CORS_NOTE = ' Browser clients: answers CORS preflights (OPTIONS, 204) for any origin; no cookies are used.';
const CLIENT_AUTH_NOTE = ' A confidential client authenticates with client_secret_basic or client_secret_post, whichever it registered; a public client sends client_id and no secret.';

const Introspection = t.Object({
  active: t.Boolean(),
  scope: t.Optional(t.String()),
  client_id: t.Optional(t.String()),
  token_type: t.Optional(t.String()),
  iat: t.Optional(t.Integer()),
  exp: t.Optional(t.Integer()),
  sub: t.Optional(t.String()),
  username: t.Optional(t.String()),
  iss: t.Optional(t.String()),
  aud: t.Optional(t.String()),
  workspace_id: t.Optional(t.String()),
});

const authorizeParameters = [
  ['response_type', true, '`code` only'],
  [
    'client_id',
    true,
    'A registered client id, or the https URL of a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document; ' +
      '`client_id_metadata_document_supported`). The document is fetched through the outbound policy (no redirects, at most 5 KiB, 5 s), ' +
      'cached per its Cache-Control between 5 minutes and 24 hours, and must name its own URL as `client_id`, list `redirect_uris` ' +
      '(matched exactly) and be a public client (`token_endpoint_auth_method` `none` or absent). Plain http only for hosts in OUTBOUND_ALLOW. ' +
      'A document that cannot be fetched or is invalid answers 400 `invalid_client` (401 at the token endpoint).',
  ],
  ['redirect_uri', false, 'Required when the client registered more than one; exact match'],
  ['code_challenge', true, 'base64url SHA-256 of the verifier'],
  ['code_challenge_method', true, '`S256` (plain is not supported)'],
  ['scope', false, 'Space-separated; default `profile`'],
  ['state', false, 'Echoed back unchanged'],
  ['resource', false, 'Audience binding (RFC 8707): a URL on this server'],
  ['prompt', false, '`consent` forces the screen; `none` forbids interaction'],
].map(([name, required, description]) => ({ name, in: 'query', required, description, schema: { type: 'string' } }));

import type { DocumentDecoration } from 'elysia';

/** TypeBox schemas are JSON Schema; OpenAPI's types do not know that. */
const doc = (value: object) => value as DocumentDecoration;

export const OAUTH_DOCS = {
  register: doc({
    summary: 'Dynamic client registration (RFC 7591); open, 15 requests per minute per IP',
    description: CORS_NOTE.trim(),
    requestBody: { required: true, content: { 'application/json': { schema: ClientMetadata } } },
    responses: { '201': json('The client record (spec 2.5)', ClientInformation), ...oauthErrors(400), ...tooMany },
  }),
  authorize: doc({
    summary: 'Authorization request; always a 302 (to sign-in, the consent screen, or back to the client), or a JSON error before the client and redirect URI are trusted',
    parameters: authorizeParameters,
    responses: { '302': { description: 'To the sign-in or consent page, or to redirect_uri with `code, state, iss` or `error, error_description, state, iss`' }, ...oauthErrors(400), ...tooMany },
  }),
  token: doc({
    summary: 'Token endpoint: authorization_code (with code_verifier) and refresh_token (rotation)',
    description: (
      CLIENT_AUTH_NOTE +
      CORS_NOTE +
      '\n\nStep-up: after a token of a grant met `403 insufficient_scope` for scopes the grant lacks, the next refresh of that grant (within 10 minutes) ' +
      'is refused once with `invalid_grant` instead of renewing the narrower scope; the refresh token stays valid. The client then sends the person ' +
      'to `/v3/oauth/authorize` for the wider scope, where the consent screen marks the added permissions.'
    ).trim(),
    requestBody: formOrJson(TokenRequest),
    responses: { '200': json('Spec 2.6', TokenResponse), ...oauthErrors(400, 401), ...tooMany },
  }),
  revoke: doc({
    summary: 'Token revocation (RFC 7009): 200 for any token, an unknown one included; a refresh token ends its whole grant',
    description: (CLIENT_AUTH_NOTE + CORS_NOTE).trim(),
    requestBody: formOrJson(TokenOnly),
    responses: { '200': json('Always `{}`', t.Object({})), ...oauthErrors(400, 401), ...tooMany },
  }),
  introspect: doc({
    summary: "Token introspection (RFC 7662) of the calling client's own tokens",
    description: CLIENT_AUTH_NOTE.trim(),
    requestBody: formOrJson(TokenOnly),
    responses: { '200': json('`{ active: false }` for anything not alive or not the caller’s', Introspection), ...oauthErrors(400, 401), ...tooMany },
  }),
};

export const DISCOVERY_RESPONSES = () => doc({ '200': json('The metadata document (cached 5 minutes; CORS open to any origin)', DiscoveryDocument) });
const DiscoveryDocument = t.Record(t.String(), t.Unknown(), { description: 'RFC 8414 / RFC 9728 metadata' });
