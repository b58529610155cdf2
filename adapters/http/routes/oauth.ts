import { Elysia, t } from 'elysia';
import { startAuthorization, consentScreen, decide, type AuthorizeParams } from '../../../core/oauth/authorize.ts';
import { authenticateClient, type ClientCredentials } from '../../../core/oauth/client-auth.ts';
import { registerClient, type OAuthClient } from '../../../core/oauth/clients.ts';
import { OAuthError } from '../../../core/oauth/errors.ts';
import type { OAuthDeps } from '../../../core/oauth/store.ts';
import { grantTokens, introspectToken, revokeToken, type TokenParams } from '../../../core/oauth/tokens.ts';
import { DomainError, excerpt } from '../../../core/shared/errors.ts';
import { bodyLimits, readForm, readText } from '../body.ts';
import { parseJsonText, textProblem } from '../input-guard.ts';
import { baseStores, unitOfWork, type BaseStores } from '../../postgres/stores.ts';
import type { AppContext } from '../context.ts';
import { httpStatusOf } from '../error-status.ts';
import { HttpResponseError, oauthResponse } from '../errors.ts';
import { renderConsentPage } from '../pages/consent.ts';
import { htmlResponse, messagePage, seeOther } from '../pages/html.ts';
import { rateLimiter, TooManyRequests } from '../rate-limit.ts';
import { csrfMatches, currentSession } from '../web-session.ts';

import { OAUTH_DOCS } from './oauth-docs.ts';
import { clientMetadataDocuments } from '../../outbound/client-metadata.ts';
import { ensureMetadataDocumentClient } from '../../../core/oauth/metadata-document.ts';

export const CONSENT_PAGE_PATH = '/oauth/consent';

/**
 * The authorization server's endpoints (spec 4.1, 7.3, 7.4, section 8). These read their own
 * bodies (form-urlencoded or JSON) so every failure, malformed input included, answers in the
 * OAuth shape; they are mounted before the API's JSON body hook.
 */
export function oauthRoutes(ctx: AppContext) {
  const deps = oauthDeps(ctx);
  const bodyLimit = bodyLimits(ctx.config).body;
  // Section 8: per IP and minute, each endpoint counted on its own.
  const limits = ctx.config.oauthRateLimits ?? { token: 120, authorize: 15 };
  const perMinute = (limit: number) => rateLimiter({ limit, windowMs: 60_000, clock: ctx.clock });
  const limiters = {
    register: perMinute(limits.authorize),
    authorize: perMinute(limits.authorize),
    token: perMinute(limits.token),
    revoke: perMinute(limits.token),
    introspect: perMinute(limits.token),
  };
  const limit = (endpoint: keyof typeof limiters, request: Request, server: { requestIP(r: Request): { address: string } | null } | null) => {
    if (!limiters[endpoint].hit(server?.requestIP(request)?.address ?? 'unknown')) throw new TooManyRequests(60);
  };
  const inTransaction = <T>(work: (stores: BaseStores) => Promise<T>) => ctx.db.transaction().execute((trx) => work(baseStores(trx)));

  return new Elysia({ name: 'routes.oauth', detail: { tags: ['OAuth'] } })
    .post(
      '/v3/oauth/register',
      async ({ request, server }) => {
        limit('register', request, server);
        const metadata = await jsonObject(request, bodyLimit, 'invalid_client_metadata');
        const client = await inTransaction((stores) => registerClient(stores, deps, metadata));
        return new Response(JSON.stringify(client), { status: 201, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
      },
      { parse: 'none', detail: OAUTH_DOCS.register },
    )
    .get(
      '/v3/oauth/authorize',
      async ({ request, server }) => {
        limit('authorize', request, server);
        const session = await currentSession(ctx, request);
        const params = queryParams(request);
        // A metadata-document client is fetched before the transaction: the fetch may take seconds.
        if (typeof params.client_id === 'string') await ensureMetadataDocumentClient(baseStores(ctx.db), deps, params.client_id, 'invalid_input');
        const outcome = await inTransaction((stores) => startAuthorization(stores, deps, params, session?.userId));
        if (outcome.next === 'redirect') return redirect(302, outcome.location);
        const consentPage = `${CONSENT_PAGE_PATH}?request=${outcome.requestId}`;
        return redirect(302, outcome.next === 'consent' ? consentPage : `/signin?return_to=${encodeURIComponent(consentPage)}`);
      },
      { detail: OAUTH_DOCS.authorize },
    )
    .get(
      CONSENT_PAGE_PATH,
      async ({ request, query }) => {
        const session = await currentSession(ctx, request);
        const here = `${CONSENT_PAGE_PATH}?request=${encodeURIComponent(query.request ?? '')}`;
        if (!session) return seeOther(`/signin?return_to=${encodeURIComponent(here)}`);
        try {
          const stores = baseStores(ctx.db);
          const screen = await consentScreen(stores, deps, query.request ?? '', session.userId);
          const user = await stores.identity.getUser(session.userId);
          return htmlResponse(renderConsentPage({ ...screen, csrf: session.csrf, user: { email: user?.email ?? '' } }));
        } catch (error) {
          return errorPage(error);
        }
      },
      // A web page of the browser flow, not an API operation.
      { query: t.Object({ request: t.Optional(t.String()) }), detail: { hide: true } },
    )
    .post(
      '/v3/oauth/authorize/decision',
      async ({ request }) => {
        let form: URLSearchParams;
        try {
          form = await readForm(request, bodyLimit);
        } catch (error) {
          return errorPage(error);
        }
        const session = await currentSession(ctx, request);
        const requestId = form.get('request_id') ?? '';
        if (!session) return seeOther(`/signin?return_to=${encodeURIComponent(`${CONSENT_PAGE_PATH}?request=${requestId}`)}`);
        if (!csrfMatches(session, form.get('csrf'))) return errorPage(new DomainError('forbidden', 'This form expired or did not come from this site; go back to the app and start again'));
        try {
          const location = await inTransaction((stores) =>
            decide(stores, deps, {
              requestId,
              userId: session.userId,
              approve: form.get('decision') === 'approve',
              workspaceId: form.get('workspace_id') || undefined,
              scopes: form.getAll('scope'),
            }),
          );
          return redirect(303, location);
        } catch (error) {
          return errorPage(error);
        }
      },
      { parse: 'none', detail: { hide: true } },
    )
    .post(
      '/v3/oauth/token',
      forClient('token', (client, params) => grantTokens(unitOfWork(ctx.db), deps, client, params), { pragma: 'no-cache' }),
      { parse: 'none', detail: OAUTH_DOCS.token },
    )
    .post(
      '/v3/oauth/revoke',
      forClient('revoke', async (client, params) => {
        await inTransaction((stores) => revokeToken(stores, deps, client, params));
        return {};
      }),
      { parse: 'none', detail: OAUTH_DOCS.revoke },
    )
    .post('/v3/oauth/introspect', forClient('introspect', (client, params) => introspectToken(baseStores(ctx.db), deps, client, params)), {
      parse: 'none',
      detail: OAUTH_DOCS.introspect,
    });

  /**
   * The endpoints a client calls with its own credentials (token, revoke, introspect): rate
   * limited, form or JSON parameters, the client authenticated, the answer JSON never cached.
   */
  function forClient(endpoint: 'token' | 'revoke' | 'introspect', run: (client: OAuthClient, params: TokenParams) => Promise<unknown>, headers: Record<string, string> = {}) {
    return async ({ request, server }: { request: Request; server: { requestIP(r: Request): { address: string } | null } | null }) => {
      limit(endpoint, request, server);
      const params = await formOrJson(request, bodyLimit);
      const client = await authenticated(request, params);
      const answer = await run(client, params);
      return new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } });
    };
  }

  /** Client authentication; an `invalid_client` after HTTP Basic carries a Basic challenge (RFC 6749 5.2). */
  async function authenticated(request: Request, params: TokenParams) {
    const credentials: ClientCredentials = { basic: basicCredentials(request.headers.get('authorization')), clientId: params.client_id, clientSecret: params.client_secret };
    await ensureMetadataDocumentClient(baseStores(ctx.db), deps, credentials.basic?.clientId ?? credentials.clientId, 'unauthenticated');
    try {
      return await authenticateClient(baseStores(ctx.db), credentials);
    } catch (error) {
      if (error instanceof OAuthError && error.code === 'invalid_client' && credentials.basic) {
        throw new HttpResponseError(oauthResponse(error, { 'www-authenticate': 'Basic realm="switchboard"' }));
      }
      throw error;
    }
  }
}

export function oauthDeps(ctx: AppContext): OAuthDeps {
  return {
    clock: ctx.clock,
    ids: ctx.ids,
    random: ctx.random,
    get issuer() {
      return ctx.config.publicUrl;
    },
    dynamicRegistration: ctx.config.dynamicRegistration ?? true,
    metadataDocuments: clientMetadataDocuments(ctx.outbound),
  };
}

/** Authorize parameters; a repeated one stays an array so the core can refuse it. */
function queryParams(request: Request): AuthorizeParams {
  const params: AuthorizeParams = {};
  for (const [key, value] of new URL(request.url).searchParams) {
    const seen = params[key];
    params[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return params;
}

/** Token, revoke and introspect take form-urlencoded (RFC 6749) or JSON (spec 4.1); no parameter twice. */
async function formOrJson(request: Request, limit: number): Promise<TokenParams> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json') {
    const body = await jsonBody(request, limit, 'invalid_request');
    const params: TokenParams = {};
    for (const [key, value] of Object.entries(body)) {
      if (typeof value !== 'string') throw new OAuthError('invalid_request', `${excerpt(key, 40)} must be a string`);
      params[key] = value;
    }
    return params;
  }
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'send the parameters as application/x-www-form-urlencoded or application/json');
  const params: TokenParams = {};
  for (const [key, value] of await inOAuthTerms('invalid_request', () => readForm(request, limit))) {
    if (key in params) throw new OAuthError('invalid_request', `the parameter ${excerpt(key, 40)} must not be repeated`);
    params[key] = value;
  }
  return params;
}

async function jsonObject(request: Request, limit: number, code: 'invalid_client_metadata' | 'invalid_request'): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new OAuthError(code, 'send the client metadata as application/json');
  return jsonBody(request, limit, code);
}

/** At most `limit` bytes of JSON (413 beyond, in the standard shape); bad JSON, depth, NUL and lone surrogates in OAuth terms. */
async function jsonBody(request: Request, limit: number, code: 'invalid_client_metadata' | 'invalid_request'): Promise<Record<string, unknown>> {
  const body = await inOAuthTerms(code, async () => parseJsonText(await readText(request, limit)));
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError(code, 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A 400 of the shared body readers said as an OAuth error (spec 7.2 shape 3); a 413 stays as it is. */
async function inOAuthTerms<T>(code: 'invalid_client_metadata' | 'invalid_request', read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'invalid_input') throw new OAuthError(code, error.messages?.join('; ') ?? error.message);
    throw error;
  }
}

function basicCredentials(header: string | null): ClientCredentials['basic'] {
  const match = header && /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) {
    if (header && /^Basic\b/i.test(header)) throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials', 'unauthenticated');
    return undefined;
  }
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials', 'unauthenticated');
  try {
    const credentials = { clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')) };
    if (textProblem(credentials.clientId) || textProblem(credentials.secret)) throw new Error('not text');
    return credentials;
  } catch {
    throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials', 'unauthenticated');
  }
}

function redirect(status: 302 | 303, location: string): Response {
  return new Response(null, { status, headers: { location, 'cache-control': 'no-store' } });
}

/** Problems on the consent pages are shown to the person; they never redirect (no open redirect). */
function errorPage(error: unknown): Response {
  if (!(error instanceof DomainError)) throw error;
  return htmlResponse(messagePage('Authorization', error.message, { kind: 'error' }), { status: httpStatusOf(error) });
}
