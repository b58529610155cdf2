/**
 * The host's HTTP pieces a plugin's routes are built with: authentication with the roles matrix
 * (`actor`, `role`), the shared schemas of the spec's shapes, body limits, rate limits. A route
 * runs its use case through `ctx.storage` (one transaction with the plugin's stores).
 */
import { authentication as hostAuthentication } from '../../adapters/http/auth.ts';
import { checkSignedLink as hostCheckSignedLink, countRefusal as hostCountRefusal } from '../../adapters/http/auth-failures.ts';
import { authenticatedRoutes as hostAuthenticatedRoutes } from '../../adapters/http/route-group.ts';
import { onPluginContext } from './host.ts';

/** Authenticates a plugin's routes (API key, session or OAuth bearer) and checks roles and scopes. */
export const authentication = onPluginContext(hostAuthentication);
/** Counts a refused credential towards the client's failure limit (429 after `AUTH_FAILURE_LIMIT`). */
export const countRefusal = onPluginContext(hostCountRefusal);
/** Checks a signed link's token; a refusal counts towards the client's failure limit. */
export const checkSignedLink = onPluginContext(hostCheckSignedLink);
/**
 * A feature's router: named, prefixed, tagged, authenticated, with `{ auth: true }` (and the
 * group's `role`, if any) guarding every route declared on it after.
 */
export const authenticatedRoutes = onPluginContext(hostAuthenticatedRoutes);
export type { RouteGroup } from '../../adapters/http/route-group.ts';

export { authErrors, StandardError, CodedError, Timestamp, iso, PageOf, PageQuery, presentPage, Uuid, OneOf } from '../../adapters/http/schemas.ts';
export type { RouteScope } from '../../adapters/http/route-scopes.ts';
export { catalogueRouteScopes } from '../../adapters/http/route-scopes.ts';
export { bodyLimits, readBytes, readMultipart, readText } from '../../adapters/http/body.ts';
export { parseJsonText } from '../../adapters/http/input-guard.ts';
export { rateLimiter, TooManyRequests } from '../../adapters/http/rate-limit.ts';
export { standard } from '../../adapters/http/errors.ts';
export { ButtonsContent, ListContent, SendBody } from '../../adapters/http/send-body.ts';
