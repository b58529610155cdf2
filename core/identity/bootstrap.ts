import { createApiToken, type ApiTokenStore, type TokenDeps } from '../tokens/api-tokens.ts';
import type { PlanName } from '../plans/plans.ts';
import { createWorkspace, normalizeEmail, signUp, type WorkspaceDeps, type WorkspaceStores } from './workspaces.ts';

/**
 * The first Owner of an installation (or a new workspace for an existing person): a user,
 * a shared workspace they own, and an API token acting as them in it.
 */
export async function bootstrapOwner(
  stores: WorkspaceStores & { tokens: ApiTokenStore },
  deps: WorkspaceDeps & TokenDeps,
  input: { email: string; workspace: string; plan: PlanName },
): Promise<{ userId: string; workspaceId: string; token: string }> {
  const email = normalizeEmail(input.email);
  const user = (await stores.identity.findUserByEmail(email)) ?? (await signUp(stores, deps, { email }));
  const workspace = await createWorkspace(stores, deps, user, { name: input.workspace, plan: input.plan });
  const token = await createApiToken(stores.tokens, deps, { userId: user.id, workspaceId: workspace.id, roles: ['OWNER'] }, 'bootstrap');
  return { userId: user.id, workspaceId: workspace.id, token: token.token! };
}
