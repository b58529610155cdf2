import { forbidden } from '../shared/errors.ts';

/** Roles of a workspace member, highest first. A member holds one or more. */
export const ROLES = ['OWNER', 'ADMIN', 'MANAGER', 'AGENT'] as const;
export type Role = (typeof ROLES)[number];

/** The capabilities of spec 2.14, one per row of the roles matrix. */
export const CAPABILITIES = [
  'workspace.read',
  'workspace.update',
  'workspace.delete',
  'members',
  'connections',
  'messages.send',
  'messages.read',
  'tokens',
  'billing',
  'helpdesk.configure',
  'helpdesk.work',
  'helpdesk.reports',
  'helpdesk.ai',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** What a role may do with a capability: everything, only read it, or nothing. */
export type Grant = 'yes' | 'read' | 'no';
export type Access = 'read' | 'write';

/** Spec 2.14, as data. Columns: Owner, Admin, Manager, Agent. */
export const ROLES_MATRIX: Record<Capability, Record<Role, Grant>> = {
  'workspace.read': row('yes', 'yes', 'yes', 'yes'),
  'workspace.update': row('yes', 'no', 'no', 'no'),
  'workspace.delete': row('yes', 'no', 'no', 'no'),
  members: row('yes', 'yes', 'yes', 'read'),
  connections: row('yes', 'yes', 'yes', 'no'),
  'messages.send': row('yes', 'yes', 'yes', 'no'),
  'messages.read': row('yes', 'yes', 'no', 'no'),
  tokens: row('yes', 'yes', 'no', 'no'),
  billing: row('yes', 'no', 'no', 'no'),
  'helpdesk.configure': row('yes', 'yes', 'yes', 'no'),
  'helpdesk.work': row('yes', 'yes', 'yes', 'yes'),
  'helpdesk.reports': row('yes', 'yes', 'yes', 'no'),
  'helpdesk.ai': row('yes', 'yes', 'read', 'read'),
};

/** Does any of the member's roles allow this access to the capability? */
export function can(roles: readonly Role[], capability: Capability, access: Access): boolean {
  return roles.some((role) => {
    const grant = ROLES_MATRIX[capability][role];
    return grant === 'yes' || (grant === 'read' && access === 'read');
  });
}

/** The one authorization check every route goes through. */
export function authorize(roles: readonly Role[], capability: Capability, access: Access): void {
  if (!can(roles, capability, access)) throw forbidden();
}

/** Higher is more powerful. */
export function rank(role: Role): number {
  return ROLES.length - ROLES.indexOf(role);
}

/** The rank of a member's most powerful role (0 for no role at all). */
export function topRank(roles: readonly Role[]): number {
  return roles.reduce((top, role) => Math.max(top, rank(role)), 0);
}

/** Nobody grants a role at or above their own (spec 2.14, rules). */
export function canGrant(granterRoles: readonly Role[], role: Role): boolean {
  return rank(role) < topRank(granterRoles);
}

/** A member may act on another member (change roles, remove) only if strictly above them. */
export function outranks(actorRoles: readonly Role[], targetRoles: readonly Role[]): boolean {
  return topRank(actorRoles) > topRank(targetRoles);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

function row(owner: Grant, admin: Grant, manager: Grant, agent: Grant): Record<Role, Grant> {
  return { OWNER: owner, ADMIN: admin, MANAGER: manager, AGENT: agent };
}
