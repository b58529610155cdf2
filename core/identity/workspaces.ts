import type { Clock, IdGen } from '../shared/ports.ts';
import { badRequest, conflict, notFound } from '../shared/errors.ts';
import { openAccount, type CreditStore } from '../plans/index.ts';
import type { PlanCatalog, PlanName } from '../plans/plans.ts';
import { authorize, type Role } from './roles.ts';
import type { Actor, IdentityStore, User, Workspace } from './identity.ts';

export interface WorkspaceStores {
  identity: IdentityStore;
  credits: CreditStore;
}

export interface WorkspaceDeps {
  clock: Clock;
  ids: IdGen;
  plans: PlanCatalog;
}

/** The item of `GET /v3/accounts` (spec 2.3). */
export interface AccountView {
  id: string;
  name: string;
  isPersonal: boolean;
  roles: Role[];
  helpdeskEnabled: boolean;
  plan: PlanName;
}

/** A new person: a user with their own personal workspace, where they are the Owner. */
export async function signUp(stores: WorkspaceStores, deps: WorkspaceDeps, input: { email: string; name?: string }): Promise<User> {
  const email = normalizeEmail(input.email);
  if (await stores.identity.findUserByEmail(email)) throw conflict(`A user with email ${email} already exists`);
  const user: User = { id: deps.ids.next(), email, name: input.name?.trim() || email.split('@')[0]!, createdAt: deps.clock.now() };
  await stores.identity.insertUser(user);
  await openPersonalWorkspace(stores, deps, user);
  return user;
}

/** A personal workspace (Free plan) for `user`, named after them, with them as its Owner. */
export async function openPersonalWorkspace(stores: WorkspaceStores, deps: WorkspaceDeps, user: User): Promise<Workspace> {
  return openWorkspace(stores, deps, user, { name: user.name, plan: 'FREE', isPersonal: true });
}

/** A shared workspace with `owner` as its Owner. */
export async function createWorkspace(
  stores: WorkspaceStores,
  deps: WorkspaceDeps,
  owner: User,
  input: { name: string; plan: PlanName },
): Promise<Workspace> {
  return openWorkspace(stores, deps, owner, { ...input, isPersonal: false });
}

/**
 * `helpdeskEnabled` (spec 2.3) says whether the helpdesk works for the workspace: it does for
 * every workspace of an installation that loads the helpdesk plugin (`PLUGINS`), reading for
 * every plan and writing on PRO (`GET /v3/summary` tells that part). The caller passes
 * `helpdesk`, whether the plugin is loaded; a stored per-workspace flag would only drift from it.
 */
export async function listAccounts(identity: IdentityStore, actor: Actor, helpdesk: boolean): Promise<AccountView[]> {
  const workspaces = await identity.listWorkspacesOf(actor.userId);
  return workspaces.map((w) => ({ id: w.id, name: w.name, isPersonal: w.isPersonal, roles: w.roles, helpdeskEnabled: helpdesk, plan: w.plan }));
}

/**
 * Only the Owner updates the workspace (spec 2.14). `helpdeskEnabled` may be sent with the value
 * it reads (a no-op); the other value is a 409 and nothing changes: the helpdesk is switched for
 * the whole installation, by `PLUGINS`.
 */
export async function updateWorkspace(
  identity: IdentityStore,
  actor: Actor,
  workspaceId: string,
  patch: { name?: string; helpdeskEnabled?: boolean },
  helpdesk: boolean,
): Promise<AccountView> {
  if (workspaceId !== actor.workspaceId) throw notFound(`Workspace ${workspaceId} not found`);
  authorize(actor.roles, 'workspace.update', 'write');
  if (patch.name !== undefined && !patch.name.trim()) throw badRequest(['body.name must not be blank']);
  if (patch.helpdeskEnabled !== undefined && patch.helpdeskEnabled !== helpdesk) {
    throw conflict(
      helpdesk
        ? 'The helpdesk works for every workspace of this installation; it is switched off for all of them by leaving helpdesk out of PLUGINS'
        : 'The helpdesk plugin is not enabled on this installation; it is switched on for every workspace by adding helpdesk to PLUGINS',
    );
  }
  const updated = await identity.updateWorkspace(workspaceId, { name: patch.name?.trim() });
  if (!updated) throw notFound(`Workspace ${workspaceId} not found`);
  return { id: updated.id, name: updated.name, isPersonal: updated.isPersonal, roles: actor.roles, helpdeskEnabled: helpdesk, plan: updated.plan };
}

export function normalizeEmail(email: string): string {
  const trimmed = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(trimmed)) throw badRequest(`email must be a valid email address`);
  return trimmed;
}

async function openWorkspace(
  stores: WorkspaceStores,
  deps: WorkspaceDeps,
  owner: User,
  input: { name: string; plan: PlanName; isPersonal: boolean },
): Promise<Workspace> {
  const name = input.name.trim();
  if (!name) throw badRequest('workspace name must not be empty');
  const now = deps.clock.now();
  const workspace: Workspace = { id: deps.ids.next(), name, isPersonal: input.isPersonal, plan: input.plan, createdAt: now };
  await stores.identity.insertWorkspace(workspace);
  await stores.identity.insertMembership({ workspaceId: workspace.id, userId: owner.id, roles: ['OWNER'], createdAt: now });
  await stores.credits.saveAccount(openAccount(workspace.id, deps.plans[input.plan], now));
  return workspace;
}
