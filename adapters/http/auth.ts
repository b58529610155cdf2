import { noteWorkspace } from './request-log.ts';
import { Elysia } from 'elysia';
import { authenticateApiKey } from '../../core/tokens/api-tokens.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { authenticateBearer } from '../../core/oauth/bearer.ts';
import { OAuthError } from '../../core/oauth/errors.ts';
import { satisfies } from '../../core/oauth/scopes.ts';
import { authorize, type Access, type Capability } from '../../core/identity/roles.ts';
import { DomainError, forbidden } from '../../core/shared/errors.ts';
import { createHash } from 'node:crypto';
import { baseStores } from '../postgres/stores.ts';
import { tokenLookupByHash } from '../postgres/repositories/api-token-store.ts';
import { authFailures, clientAddress } from './auth-failures.ts';
import { onePerContext, type AppContext } from './context.ts';
import { httpStatusOf } from './error-status.ts';
import { HttpResponseError, oauthResponse, standard } from './errors.ts';
import { routeKey } from './route-scopes.ts';
import { isUuid } from '../../core/shared/ids.ts';
import { authenticateSession, csrfTokenMatches, type WebSession } from '../../core/identity/sessions.ts';
import { originOf, sessionCookieValue } from './web-session.ts';

export const REALM = 'switchboard';

/**
 * Authentication as a route option: `{ auth: true }` resolves `actor` from an `apikey` (spec 5.1)
 * or, without one, an OAuth bearer token (5.3) whose scopes must cover the route's row in the
 * route scope table. With an `apikey` present, `Authorization: Bearer` is ignored (5.2: never
 * merged). With neither, the sign-in session cookie of `/signin` acts as its member, like an API
 * key of theirs; its writes must come from PUBLIC_URL's origin and carry `X-CSRF-Token`.
 */
export function authentication(ctx: AppContext) {
  // Authentication runs at `transform`, before the body and query are validated: a caller
  // without a credential (or without the route's scope) learns nothing about the route's
  // schema and gets 401/403, not 400. `resolve` then hands the actor to the handler.
  // `role` may run before `auth` (a route's own options run before its group's), so whichever
  // comes first authenticates and the other awaits the same answer: one authentication a request.
  const pending = new WeakMap<Request, Promise<Actor>>();
  const actors = new WeakMap<Request, Actor>();
  const authenticate = (request: Request, headers: Record<string, string | undefined>, route: string): Promise<Actor> => {
    let actor = pending.get(request);
    if (!actor) {
      actor = authenticateRequest(ctx, request, headers, route);
      pending.set(request, actor);
    }
    return actor;
  };
  return new Elysia({ name: 'auth' }).macro({
    auth: {
      detail: { security: [{ apikey: [] }, { oauth2: [] }, { session: [] }] },
      async transform({ headers, request, route }) {
        actors.set(request, await authenticate(request, headers, route));
      },
      resolve({ request }): { actor: Actor } {
        const actor = actors.get(request);
        if (!actor) throw new Error('authentication did not run before resolve');
        return { actor };
      },
    },
    /**
     * `role: 'members'` (read for GET/HEAD, write otherwise) or `role: ['members', 'write']`:
     * the capability the route's use case authorizes, checked at `transform` with `auth` so a
     * role that may not use the route gets 403 before its body is validated (no schema rules
     * leak). An early refusal only: the core's own `authorize` stays the real check. Declare it
     * only where the use case's check is that one capability, whatever the data.
     */
    role: (declared: RoleCheck) => ({
      async transform({ headers, request, route }: { headers: Record<string, string | undefined>; request: Request; route: string }) {
        const actor = await authenticate(request, headers, route);
        const [capability, access] = typeof declared === 'string' ? [declared, accessOf(request.method)] : declared;
        authorize(actor.roles, capability, access);
      },
    }),
  });
}

/** The capability a route's use case checks, with the access it asks (else from the method). */
export type RoleCheck = Capability | readonly [Capability, Access];

function accessOf(method: string): Access {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/** `challengeScope` overrides the scope a 401 asks for (else the route's, from the scope table). */
export async function authenticateRequest(
  ctx: AppContext,
  request: Request,
  headers: Record<string, string | undefined>,
  route: string,
  challengeScope?: string,
): Promise<Actor> {
  try {
    const actor = await authenticateCredential(ctx, request, headers, route, challengeScope);
    noteWorkspace(request, actor.workspaceId);
    return actor;
  } catch (error) {
    // A credential presented and refused counts against the client's address: 429 once over the
    // limit. Valid credentials never reach this (no database work for them).
    if (refused(error) && (headers['apikey'] !== undefined || headers['authorization'] !== undefined)) {
      await authFailures(ctx).failed('credential', clientAddress(ctx, request));
    }
    throw error;
  }
}

const refused = (error: unknown) =>
  error instanceof HttpResponseError ? error.response.status === 401 : error instanceof DomainError && error.kind === 'unauthenticated';

async function authenticateCredential(
  ctx: AppContext,
  request: Request,
  headers: Record<string, string | undefined>,
  route: string,
  challengeScope: string | undefined,
): Promise<Actor> {
  const accountId = headers['x-account-id']?.trim() || undefined;
  // An id that cannot name a workspace is 403 without reaching the database, once the
  // credential itself is known good.
  const malformed = accountId !== undefined && !isUuid(accountId);
  const workspace = malformed ? undefined : accountId?.toLowerCase();
  const apiKey = headers['apikey'];
  const bearer = bearerToken(headers['authorization']);
  const resourceMetadata = protectedResourceMetadataUrl(ctx, route);
  const required = ctx.routeScopes.get(routeKey(request.method, route));
  // What a 401 asks for, so a client requests the right scopes (MCP authorization, scope selection).
  const scope = challengeScope ?? (required && required.length > 0 ? required[0] : undefined);

  if (apiKey === undefined && bearer === undefined) {
    const cookie = sessionCookieValue(ctx, request);
    if (cookie !== undefined) {
      let signedIn: Awaited<ReturnType<typeof authenticateSession>>;
      try {
        signedIn = await authenticateSession(poolStores(ctx), ctx, cookie, workspace);
      } catch (error) {
        if (error instanceof DomainError && error.kind === 'unauthenticated') {
          const response = standard(httpStatusOf(error), error.message);
          response.headers.set('www-authenticate', bearerChallenge(new OAuthError('invalid_token', 'the sign-in session has ended', 'unauthenticated', scope), resourceMetadata));
          throw new HttpResponseError(response);
        }
        throw error;
      }
      if (malformed) throw forbidden('You are not a member of the workspace named in X-Account-Id');
      if (!SAFE_METHODS.has(request.method)) refuseCrossSite(ctx, headers, signedIn.session);
      return signedIn.actor;
    }
  }

  if (apiKey !== undefined || bearer === undefined) {
    try {
      const actor = await authenticateApiKey(poolStores(ctx), { clock: ctx.clock, hashSecret: nativeSha256Hex }, apiKey, workspace);
      if (malformed) throw forbidden('You are not a member of the workspace named in X-Account-Id');
      return actor;
    } catch (error) {
      // Tell OAuth clients where to find out how to get a token (RFC 9728).
      // Spec 7.5 names a missing token `invalid_token` too (RFC 6750 3.1 would send no code then).
      if (apiKey === undefined && error instanceof DomainError && error.kind === 'unauthenticated') {
        const response = standard(httpStatusOf(error), 'Invalid or missing API key');
        response.headers.set('www-authenticate', bearerChallenge(new OAuthError('invalid_token', 'no API key or access token was sent', 'unauthenticated', scope), resourceMetadata));
        throw new HttpResponseError(response);
      }
      throw error;
    }
  }

  const url = new URL(request.url);
  let actor: Actor;
  try {
    actor = await authenticateBearer(poolStores(ctx), ctx, { token: bearer, requestUrl: `${ctx.config.publicUrl}${url.pathname}`, accountId: workspace });
  } catch (error) {
    if (error instanceof OAuthError) throw challenge(error.kind === 'unauthenticated' && !error.scope ? new OAuthError(error.code, error.description, 'unauthenticated', scope) : error, resourceMetadata);
    throw error;
  }
  if (malformed) throw forbidden('This token is bound to a different workspace; re-authorize to switch');
  if (required === undefined || required === null) {
    throw challenge(new OAuthError('insufficient_scope', 'this operation is not available to OAuth clients', 'forbidden'), resourceMetadata);
  }
  if (required.length > 0 && !satisfies(actor.scopes ?? [], required)) {
    throw challenge(new OAuthError('insufficient_scope', `this operation needs the scope ${required.join(' or ')}`, 'forbidden', required[0]), resourceMetadata);
  }
  return actor;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A write made with the session cookie (the browser adds it to any request to this host) must be
 * the service's own pages' doing: `Origin` (or, without it, `Referer`) is PUBLIC_URL's origin,
 * and `X-CSRF-Token` is the session's token (`GET /v3/session` hands it to the page), which a
 * page of another site cannot read. Otherwise 403, nothing done.
 */
function refuseCrossSite(ctx: AppContext, headers: Record<string, string | undefined>, session: WebSession): void {
  const expected = originOf(ctx.config.publicUrl);
  const origin = headers['origin'] !== undefined ? headers['origin'].trim() : headers['referer'] !== undefined ? originOf(headers['referer']) : undefined;
  if (expected === undefined || origin !== expected) {
    throw forbidden('A write with a sign-in session must come from this service\'s own origin (Origin or Referer)');
  }
  if (!csrfTokenMatches(session, headers['x-csrf-token'])) {
    throw forbidden('A write with a sign-in session must carry the session\'s X-CSRF-Token (GET /v3/session)');
  }
}

/** 401/403 of an API call (spec 7.5): the OAuth body and the `WWW-Authenticate` challenge. */
export function challenge(error: OAuthError, resourceMetadata: string): HttpResponseError {
  return new HttpResponseError(oauthResponse(error, { 'www-authenticate': bearerChallenge(error, resourceMetadata) }));
}

/**
 * `Bearer realm, error, error_description, scope, resource_metadata` (spec 7.5; RFC 6750 3,
 * RFC 9728 5.1): on 401 `scope` is what the resource needs, on 403 the missing scope.
 */
export function bearerChallenge(error: OAuthError, resourceMetadata: string): string {
  const params = [`realm="${REALM}"`, `error="${error.code}"`, `error_description="${quoted(error.description)}"`];
  if (error.scope) params.push(`scope="${quoted(error.scope)}"`);
  params.push(`resource_metadata="${quoted(resourceMetadata)}"`);
  return `Bearer ${params.join(', ')}`;
}

/** The MCP endpoint has its own protected-resource document; the rest of the API shares one. */
export function protectedResourceMetadataUrl(ctx: AppContext, route: string): string {
  const base = `${ctx.config.publicUrl}/.well-known/oauth-protected-resource`;
  return route === '/v3/mcp' || route.startsWith('/v3/mcp/') ? `${base}/v3/mcp` : base;
}

function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ ]+(.+)$/i.exec(header.trim());
  return match ? match[1]!.trim() : undefined;
}

/** A quoted-string of RFC 9110: backslash and double quote escaped; control characters dropped. */
function quoted(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/["\\]/g, (c) => `\\${c}`);
}

/** The same authentication for routes outside Elysia's macro (the MCP endpoint). */
export function requestAuthenticator(ctx: AppContext, route: string, challengeScope?: string): (request: Request) => Promise<Actor> {
  return (request) => {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    return authenticateRequest(ctx, request, headers, route, challengeScope);
  };
}

/** The base stores over the pool, made once per context: every request authenticates with them. */
const poolStores = onePerContext((ctx) => {
  const stores = baseStores(ctx.db);
  // Every request with an API key looks its token up: those that arrive together share a statement.
  return { ...stores, tokens: { ...stores.tokens, findByHash: tokenLookupByHash(ctx.db) } };
});

/** `hashSecret` of core/tokens/secret.ts, natively: the same hex SHA-256, at a fraction of the pure-JS cost per request. */
function nativeSha256Hex(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
