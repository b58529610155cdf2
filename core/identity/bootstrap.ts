import { createApiToken, type ApiTokenStore, type TokenDeps } from '../tokens/api-tokens.ts';
import type { PlanName } from '../plans/plans.ts';
import type { User, Workspace } from './identity.ts';
import { createWorkspace, normalizeEmail, signUp, type WorkspaceDeps, type WorkspaceStores } from './workspaces.ts';

/**
 * The first Owner of an installation (or a new workspace for an existing person): a user,
 * a shared workspace they own, and an API token acting as them in it (`cli bootstrap`).
 */
export async function bootstrapOwner(
  stores: WorkspaceStores & { tokens: ApiTokenStore },
  deps: WorkspaceDeps & TokenDeps,
  input: { email: string; name?: string; workspace: string; plan: PlanName },
): Promise<{ userId: string; workspaceId: string; token: string }> {
  const { user, workspace } = await openOwnerWorkspace(stores, deps, input);
  const token = await createApiToken(stores.tokens, deps, { userId: user.id, workspaceId: workspace.id, roles: ['OWNER'] }, 'bootstrap');
  return { userId: user.id, workspaceId: workspace.id, token: token.token! };
}

/**
 * The person (found by email, or signed up with their personal workspace) and a new shared
 * workspace they own: `bootstrapOwner` without the API token, which the first-run set-up page
 * (first-run.ts) does not need.
 */
export async function openOwnerWorkspace(
  stores: WorkspaceStores,
  deps: WorkspaceDeps,
  input: { email: string; name?: string; workspace: string; plan: PlanName },
): Promise<{ user: User; workspace: Workspace }> {
  const email = normalizeEmail(input.email);
  const user = (await stores.identity.findUserByEmail(email)) ?? (await signUp(stores, deps, { email, name: input.name }));
  const workspace = await createWorkspace(stores, deps, user, { name: input.workspace, plan: input.plan });
  return { user, workspace };
}
