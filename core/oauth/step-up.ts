import { PENDING_REQUEST_TTL_SECONDS } from './artefacts.ts';
import { isScope, UNREQUESTABLE_SCOPES, type Scope } from './scopes.ts';
import type { OAuthDeps, OAuthStores } from './store.ts';

/**
 * Step-up authorization (MCP authorization, "scope challenge handling"). A client whose token met
 * `403 insufficient_scope` should send the person back to the authorize endpoint for the wider
 * scope; a refresh cannot widen a grant (spec 7.3). Some clients (the MCP TypeScript SDK 1.x)
 * refresh first whenever they hold a refresh token, get the same narrow scope back, and give up.
 * So the challenge is remembered on the grant for as long as an authorization request lives, and
 * the next refresh of that grant that would again lack those scopes is refused once with
 * `invalid_grant`: the client then starts a new authorization. The refresh token is not spent,
 * so a client that keeps it can still renew its narrower access.
 */
export const SCOPE_CHALLENGE_TTL_SECONDS = PENDING_REQUEST_TTL_SECONDS;

/**
 * Called where the MCP endpoint answers a bearer token `insufficient_scope`, with the scopes the
 * challenge names. Only there: MCP clients are told to step up on that answer, while a REST
 * client probing an endpoint it lacks must not find its next refresh refused.
 */
export async function rememberScopeChallenge(stores: OAuthStores, deps: Pick<OAuthDeps, 'clock'>, grantId: string | undefined, challenged: readonly string[]): Promise<void> {
  const scopes = challenged.filter((s): s is Scope => isScope(s) && !(UNREQUESTABLE_SCOPES as readonly string[]).includes(s));
  if (!grantId || scopes.length === 0) return;
  const until = new Date(deps.clock.now().getTime() + SCOPE_CHALLENGE_TTL_SECONDS * 1000);
  await stores.oauth.recordScopeChallenge(grantId, scopes, until);
}

/**
 * The scopes a live challenge of this grant asks for beyond `renewing` (what the refresh would
 * issue), clearing the challenge; empty when there is none or the refresh covers it.
 */
export async function unansweredChallenge(stores: OAuthStores, deps: Pick<OAuthDeps, 'clock'>, grantId: string, renewing: readonly Scope[]): Promise<Scope[]> {
  const challenged = await stores.oauth.takeScopeChallenge(grantId, deps.clock.now());
  return (challenged ?? []).filter((s) => !renewing.includes(s));
}
