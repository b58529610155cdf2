import type { OAuthStore } from '../oauth/store.ts';
import { badRequest } from '../shared/errors.ts';
import type { ApiTokenStore } from '../tokens/api-tokens.ts';
import type { User } from './identity.ts';
import { passwordProblems, type PasswordHasher } from './passwords.ts';
import { openPersonalWorkspace, type WorkspaceDeps, type WorkspaceStores } from './workspaces.ts';

/**
 * Taking over a never-verified account (issue 19, section 3). Anyone can make an account for an
 * address they do not own (an invitation link they pass to themselves, or the CLI); until
 * someone proves the address, the account is only whoever knows its password. A mailed
 * invitation's token proves the address, so its holder may take the account over: a password of
 * their choosing, the address verified, and nothing left of what the account's earlier holder
 * could reach it by or had it join.
 *
 * What is cut: every sign-in session, every API token and every OAuth grant (with its codes and
 * tokens), in every workspace. The account leaves every workspace it joined through an
 * invitation passed on by link (nothing proved the address there), and its personal workspace,
 * made when the account was, stays behind without it (whatever its earlier holder set up there,
 * webhooks included, keeps running for nobody's account); a fresh personal workspace replaces
 * it. Owner memberships of workspaces the installation's administrator made for the address
 * (the CLI `bootstrap`) stay: the administrator vouched for those. The workspace of this
 * invitation is joined afterwards, as for any acceptance.
 */
export interface AccountClaimStore {
  markEmailVerified(userId: string, at: Date): Promise<void>;
  isEmailVerified(userId: string): Promise<boolean>;
  /** Workspaces the person joined by accepting an invitation passed on by link (not mailed). */
  workspacesJoinedByLink(userId: string): Promise<string[]>;
  renameUser(userId: string, name: string): Promise<void>;
}

export type ReclaimStores = WorkspaceStores & { invitations: AccountClaimStore; tokens: ApiTokenStore; oauth: Pick<OAuthStore, 'deleteConsentsOf'> };

/** What of the invitation decides: how it reached the invitee, and where it joins them. */
type ClaimingInvitation = { workspaceId: string; deliveredBy: 'mail' | 'link' };

export const CANNOT_TAKE_OVER = 'An account with this address exists and its address is confirmed: enter its password to join with it.';

/** Whether this invitation may take the account of its address over: mailed, to a never-verified account. */
export async function mayTakeOver(stores: { invitations: AccountClaimStore }, invitation: ClaimingInvitation, account: User | undefined): Promise<boolean> {
  return invitation.deliveredBy === 'mail' && account !== undefined && !(await stores.invitations.isEmailVerified(account.id));
}

/**
 * Takes `account` over for the holder of `invitation`'s mailed token. Run it inside the
 * acceptance's transaction; the caller announces the access change after the commit, so open
 * sockets of the earlier holder are dropped at once.
 */
export async function takeOverAccount(
  stores: ReclaimStores,
  deps: WorkspaceDeps & { hasher: PasswordHasher },
  invitation: ClaimingInvitation,
  account: User,
  input: { password: string; name?: string },
): Promise<User> {
  // Serializes with another takeover or password change of the same person; read after the lock.
  await stores.identity.lockCredentials(account.id);
  if (!(await mayTakeOver(stores, invitation, account))) throw badRequest(CANNOT_TAKE_OVER);
  const problems = passwordProblems(input.password);
  if (problems.length > 0) throw badRequest(problems);

  await stores.identity.setPasswordHash(account.id, await deps.hasher.hash(input.password)); // ends the web sessions
  await stores.tokens.deleteEveryOf(account.id);
  await stores.oauth.deleteConsentsOf(account.id);
  // The earlier holder's choice of name goes too: other workspaces see it in their member lists.
  const name = input.name?.trim().slice(0, 120) || account.email.split('@')[0]!;
  await stores.invitations.renameUser(account.id, name);
  const user = { ...account, name };

  for (const workspaceId of await stores.invitations.workspacesJoinedByLink(account.id)) {
    if (workspaceId !== invitation.workspaceId) await stores.identity.deleteMembership(workspaceId, account.id);
  }
  for (const workspace of await stores.identity.listWorkspacesOf(account.id)) {
    if (workspace.isPersonal && workspace.id !== invitation.workspaceId) await stores.identity.deleteMembership(workspace.id, account.id);
  }
  await openPersonalWorkspace(stores, deps, user);
  await stores.invitations.markEmailVerified(account.id, deps.clock.now());
  return user;
}
