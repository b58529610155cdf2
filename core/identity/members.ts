import { badRequest, conflict, forbidden, notFound } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { authorize, canGrant, outranks, type Role } from './roles.ts';
import type { Actor, Member } from './identity.ts';
import type { ApiTokenStore } from '../tokens/api-tokens.ts';
import { normalizeEmail, signUp, type WorkspaceDeps, type WorkspaceStores } from './workspaces.ts';
import { passwordSetupUrl, type PasswordLinkDeps } from './passwords.ts';

/**
 * Members of a workspace. Everyone may list them; Owners, Admins and Managers manage them,
 * and nobody grants a role at or above their own or acts on a member at or above them.
 */
export async function listMembers(stores: WorkspaceStores, actor: Actor, request: PageRequest): Promise<Page<Member>> {
  authorize(actor.roles, 'members', 'read');
  return stores.identity.listMembers(actor.workspaceId, request);
}

/**
 * Adds a person by email. Someone new to the service gets a user (with a personal workspace)
 * on the spot: that is the invitation, and the answer carries `passwordSetupUrl`, a link
 * (valid 7 days, once) for them to set a password and sign in.
 *
 * A person who already exists gets no link, even without a password: anyone who owns a
 * workspace (everyone owns their personal one) could otherwise add a password-less person and
 * take over their account with it.
 */
export async function addMember(
  stores: WorkspaceStores,
  deps: WorkspaceDeps & PasswordLinkDeps,
  actor: Actor,
  input: { email: string; name?: string; roles: Role[] },
): Promise<Member & { passwordSetupUrl?: string }> {
  authorize(actor.roles, 'members', 'write');
  const roles = grantableRoles(actor, input.roles);
  const email = normalizeEmail(input.email);
  const existing = await stores.identity.findUserByEmail(email);
  const user = existing ?? (await signUp(stores, deps, { email, name: input.name }));
  if (await stores.identity.getMembership(actor.workspaceId, user.id)) {
    throw conflict(`${email} is already a member of this workspace`);
  }
  await stores.identity.insertMembership({ workspaceId: actor.workspaceId, userId: user.id, roles, createdAt: deps.clock.now() });
  const member = (await stores.identity.getMember(actor.workspaceId, user.id))!;
  return existing ? member : { ...member, passwordSetupUrl: passwordSetupUrl(deps, user.id, null) };
}

export async function changeMemberRoles(stores: WorkspaceStores, actor: Actor, userId: string, wanted: Role[]): Promise<Member> {
  authorize(actor.roles, 'members', 'write');
  const target = await existingMember(stores, actor, userId);
  if (target.userId === actor.userId) throw forbidden('You cannot change your own roles');
  if (!outranks(actor.roles, target.roles)) throw forbidden('You cannot change the roles of a member at or above your own role');
  const roles = grantableRoles(actor, wanted);
  await stores.identity.setRoles(actor.workspaceId, userId, roles);
  return { ...target, roles };
}

/** Removes a member below the actor; their API tokens for this workspace are revoked with it. */
export async function removeMember(stores: WorkspaceStores & { tokens: ApiTokenStore }, actor: Actor, userId: string): Promise<void> {
  authorize(actor.roles, 'members', 'write');
  const target = await existingMember(stores, actor, userId);
  if (target.userId === actor.userId) throw forbidden('You cannot remove yourself from the workspace');
  if (!outranks(actor.roles, target.roles)) throw forbidden('You cannot remove a member at or above your own role');
  await stores.identity.deleteMembership(actor.workspaceId, userId);
  await stores.tokens.deleteAllOf(actor.workspaceId, userId);
}

function grantableRoles(actor: Actor, wanted: Role[]): Role[] {
  const roles = [...new Set(wanted)];
  if (roles.length === 0) throw badRequest('roles must name at least one role');
  const refused = roles.filter((role) => !canGrant(actor.roles, role));
  if (refused.length > 0) throw forbidden(`You cannot grant ${refused.join(', ')}: nobody grants a role at or above their own`);
  return roles;
}

async function existingMember(stores: WorkspaceStores, actor: Actor, userId: string): Promise<Member> {
  const member = await stores.identity.getMember(actor.workspaceId, userId);
  if (!member) throw notFound(`Member ${userId} not found`);
  return member;
}
