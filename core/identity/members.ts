import { badRequest, forbidden, notFound } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { authorize, canGrant, outranks, type Role } from './roles.ts';
import type { Actor, Member } from './identity.ts';
import type { ApiTokenStore } from '../tokens/api-tokens.ts';
import type { WorkspaceStores } from './workspaces.ts';
import type { SessionStore } from './sessions.ts';

/**
 * Members of a workspace; people join by invitation (invitations.ts). Everyone may list them;
 * Owners, Admins and Managers manage them, and nobody grants a role at or above their own or
 * acts on a member at or above them.
 */
export async function listMembers(stores: WorkspaceStores, actor: Actor, request: PageRequest): Promise<Page<Member>> {
  authorize(actor.roles, 'members', 'read');
  return stores.identity.listMembers(actor.workspaceId, request);
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

/**
 * Removes a member below the actor; their API tokens for this workspace are revoked with it, and
 * every sign-in session of theirs ends (they sign in again for the workspaces they keep).
 */
export async function removeMember(stores: WorkspaceStores & { tokens: ApiTokenStore; sessions: SessionStore }, actor: Actor, userId: string): Promise<void> {
  authorize(actor.roles, 'members', 'write');
  const target = await existingMember(stores, actor, userId);
  if (target.userId === actor.userId) throw forbidden('You cannot remove yourself from the workspace');
  if (!outranks(actor.roles, target.roles)) throw forbidden('You cannot remove a member at or above your own role');
  await stores.identity.deleteMembership(actor.workspaceId, userId);
  await stores.tokens.deleteAllOf(actor.workspaceId, userId);
  await stores.sessions.deleteAllOf(userId);
}

/** The wanted roles, deduplicated; 403 for any at or above the actor's own. */
export function grantableRoles(actor: Actor, wanted: Role[]): Role[] {
  const roles = [...new Set(wanted)];
  if (roles.length === 0) throw badRequest(['body.roles must name at least one role']);
  const refused = roles.filter((role) => !canGrant(actor.roles, role));
  if (refused.length > 0) throw forbidden(`You cannot grant ${refused.join(', ')}: nobody grants a role at or above their own`);
  return roles;
}

async function existingMember(stores: WorkspaceStores, actor: Actor, userId: string): Promise<Member> {
  const member = await stores.identity.getMember(actor.workspaceId, userId);
  if (!member) throw notFound(`Member ${userId} not found`);
  return member;
}

/** Where a feature checks that users belong to the workspace (inbox and team stores offer it). */
export interface WorkspaceMembership {
  /** Which of these users are members of the workspace. */
  workspaceMembers(workspaceId: string, userIds: string[]): Promise<string[]>;
}

/**
 * The users to make members of an inbox or a team: `userIds` without repeats, once every one is a
 * member of the workspace; otherwise a 400 naming each one who is not.
 */
export async function onlyWorkspaceMembers(stores: WorkspaceMembership, workspaceId: string, userIds: string[]): Promise<string[]> {
  const wanted = [...new Set(userIds)];
  const known = new Set(await stores.workspaceMembers(workspaceId, wanted));
  const unknown = wanted.filter((u) => !known.has(u));
  if (unknown.length > 0) throw badRequest(unknown.map((u) => `body.userIds: ${u} is not a member of this workspace`));
  return wanted;
}
