import { badRequest, conflict, DomainError, forbidden, notFound } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { Random } from '../shared/ports.ts';
import { base64url, hashSecret } from '../tokens/secret.ts';
import type { User, Workspace } from './identity.ts';
import { currentInvitationStatus, nextInvitationStatus, UNUSABLE_INVITATION, type InvitationEvent, type InvitationStatus } from './invitation-status.ts';
import { grantableRoles } from './members.ts';
import { passwordProblems, verifySignIn, type PasswordHasher } from './passwords.ts';
import { authorize, outranks, type Role } from './roles.ts';
import type { Actor } from './identity.ts';
import { normalizeEmail, signUp, type WorkspaceDeps, type WorkspaceStores } from './workspaces.ts';
import { mayTakeOver, takeOverAccount, type AccountClaimStore, type ReclaimStores } from './account-reclaim.ts';

/**
 * Joining a workspace is an invitation the invitee accepts (issue 19, section 3). The invitation
 * carries a random token, of which only the hash is stored; whoever holds it may accept or
 * decline that one invitation and nothing else. Accepting attaches an existing account only
 * when the acceptor also signs in with its password, and creates an account otherwise. A token
 * that came back from a mailed link proves the address: the account's email is then verified,
 * and an account nobody had verified may be taken over with it (account-reclaim.ts).
 */
export interface Invitation {
  id: string;
  workspaceId: string;
  email: string;
  roles: Role[];
  invitedBy: string | null;
  tokenHash: string;
  deliveredBy: 'mail' | 'link';
  status: InvitationStatus;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

export interface InvitationListItem extends Invitation {
  inviterName: string | null;
}

export interface InvitationStore extends AccountClaimStore {
  insert(invitation: Invitation): Promise<void>;
  /** The PENDING row of this workspace and email, row-locked. */
  lockPending(workspaceId: string, email: string): Promise<Invitation | undefined>;
  /** Row-locked read by token hash: two acceptances of one token cannot both pass. */
  lockByTokenHash(tokenHash: string): Promise<Invitation | undefined>;
  lockInWorkspace(workspaceId: string, id: string): Promise<Invitation | undefined>;
  setStatus(id: string, status: InvitationStatus, at: Date, acceptedBy?: string): Promise<void>;
  /** PENDING and not expired at `now`, oldest first. */
  listPending(workspaceId: string, now: Date, request: PageRequest): Promise<Page<InvitationListItem>>;
}

export type InvitationStores = WorkspaceStores & { invitations: InvitationStore };
export type InvitationDeps = WorkspaceDeps & { random: Random };

export const INVITATION_DAYS = 7;
const TOKEN_PREFIX = 'inv_';
const TOKEN_SHAPE = /^inv_[A-Za-z0-9_-]{43}$/;

/**
 * Invites `email` to the actor's workspace with `roles` (below the actor's own). The answer is
 * the same whether or not the email has an account. A pending invitation to the same email is
 * replaced (REVOKED) by the new one. Someone already a member is a 409: that tells only what the
 * member list of this workspace tells anyway.
 */
export async function inviteMember(
  stores: InvitationStores,
  deps: InvitationDeps,
  actor: Actor,
  input: { email: string; roles: Role[]; deliveredBy: 'mail' | 'link' },
): Promise<{ invitation: Invitation; token: string }> {
  authorize(actor.roles, 'members', 'write');
  const roles = grantableRoles(actor, input.roles);
  const email = normalizeEmail(input.email);
  const existing = await stores.identity.findUserByEmail(email);
  if (existing && (await stores.identity.getMembership(actor.workspaceId, existing.id))) {
    throw conflict(`${email} is already a member of this workspace`);
  }
  const now = deps.clock.now();
  const previous = await stores.invitations.lockPending(actor.workspaceId, email);
  if (previous) await stores.invitations.setStatus(previous.id, 'REVOKED', now);
  const token = `${TOKEN_PREFIX}${base64url(deps.random.bytes(32))}`;
  const invitation: Invitation = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    email,
    roles,
    invitedBy: actor.userId,
    tokenHash: hashSecret(token),
    deliveredBy: input.deliveredBy,
    status: 'PENDING',
    expiresAt: new Date(now.getTime() + INVITATION_DAYS * 86_400_000),
    createdAt: now,
    updatedAt: now,
  };
  await stores.invitations.insert(invitation);
  return { invitation, token };
}

export async function listInvitations(stores: InvitationStores, deps: Pick<InvitationDeps, 'clock'>, actor: Actor, request: PageRequest): Promise<Page<InvitationListItem>> {
  authorize(actor.roles, 'members', 'read');
  return stores.invitations.listPending(actor.workspaceId, deps.clock.now(), request);
}

/** Withdraws a pending invitation; as with members, only one for roles below the actor's own. */
export async function revokeInvitation(stores: InvitationStores, deps: Pick<InvitationDeps, 'clock'>, actor: Actor, id: string): Promise<Invitation> {
  authorize(actor.roles, 'members', 'write');
  const invitation = await stores.invitations.lockInWorkspace(actor.workspaceId, id);
  if (!invitation) throw notFound(`Invitation ${id} not found`);
  if (!outranks(actor.roles, invitation.roles)) throw forbidden('You cannot revoke an invitation for a role at or above your own');
  const now = deps.clock.now();
  const status = await transition(stores, invitation, 'revoke', now);
  return { ...invitation, status, updatedAt: now };
}

/** What the acceptance page shows: the invitation with its workspace and inviter. */
export interface InvitationDetails {
  invitation: Invitation;
  workspace: Workspace;
  inviterName: string | null;
  /**
   * The invitation was mailed and its address has an account nobody verified: the page offers to
   * take it over. Only the mailbox's reader holds a mailed token, so telling them that an account
   * exists tells no one else; for a link it stays false whatever the address has.
   */
  canTakeOver: boolean;
}

/** The pending invitation a token is for; otherwise a 400 that says why it cannot be used. */
export async function openInvitation(stores: InvitationStores, deps: Pick<InvitationDeps, 'clock'>, token: unknown): Promise<InvitationDetails> {
  const invitation = await usableInvitation(stores, deps, token);
  const workspace = await stores.identity.getWorkspace(invitation.workspaceId);
  if (!workspace) throw badRequest(UNUSABLE_INVITATION.REVOKED);
  const inviter = invitation.invitedBy ? await stores.identity.getUser(invitation.invitedBy) : undefined;
  const account = invitation.deliveredBy === 'mail' ? await stores.identity.findUserByEmail(invitation.email) : undefined;
  return { invitation, workspace, inviterName: inviter?.name ?? null, canTakeOver: await mayTakeOver(stores, invitation, account) };
}

export const WRONG_PASSWORD = 'An account with this address exists: enter its password to join with it.';

/**
 * Accepts with the token. When the email has an account, `password` must be its password;
 * otherwise an account is made with `password` (and `name`). With `takeOver`, a mailed token
 * takes a never-verified account over with `password` as its new password (account-reclaim.ts);
 * a verified account, or a link, is refused (400). The acceptor joins with the invitation's
 * roles. Run it in one transaction: the invitation row stays locked until the end. After a
 * takeover (`tookOver`), the caller announces the access change of the person.
 */
export async function acceptInvitation(
  stores: InvitationStores & ReclaimStores,
  deps: InvitationDeps & { hasher: PasswordHasher },
  token: unknown,
  input: { password: string; name?: string; takeOver?: boolean },
): Promise<{ user: User; workspace: Workspace; created: boolean; tookOver: boolean }> {
  const invitation = await usableInvitation(stores, deps, token);
  const existing = await stores.identity.findUserByEmail(invitation.email);
  let user: User;
  if (existing && input.takeOver) {
    // The same answer for a link whatever the account is: its holder is the inviter, not the address.
    if (invitation.deliveredBy !== 'mail') throw badRequest(WRONG_PASSWORD);
    user = await takeOverAccount(stores, deps, invitation, existing, input);
  } else if (existing) {
    const signedIn = await verifySignIn(stores, deps.hasher, invitation.email, input.password);
    if (!signedIn || signedIn.id !== existing.id) throw badRequest(WRONG_PASSWORD);
    user = signedIn;
  } else {
    const problems = passwordProblems(input.password);
    if (problems.length > 0) throw badRequest(problems);
    user = await signUp(stores, deps, { email: invitation.email, name: input.name?.slice(0, 120) });
    await stores.identity.setPasswordHash(user.id, await deps.hasher.hash(input.password));
  }
  const now = deps.clock.now();
  if (!(await stores.identity.getMembership(invitation.workspaceId, user.id))) {
    await stores.identity.insertMembership({ workspaceId: invitation.workspaceId, userId: user.id, roles: invitation.roles, createdAt: now });
  }
  // Only a mailed token proves the address: a link passed on by the inviter proves nothing about it.
  if (invitation.deliveredBy === 'mail') await stores.invitations.markEmailVerified(user.id, now);
  await transition(stores, invitation, 'accept', now, user.id);
  const workspace = (await stores.identity.getWorkspace(invitation.workspaceId))!;
  return { user, workspace, created: !existing, tookOver: Boolean(existing && input.takeOver) };
}

export async function declineInvitation(stores: InvitationStores, deps: Pick<InvitationDeps, 'clock'>, token: unknown): Promise<void> {
  const invitation = await usableInvitation(stores, deps, token);
  await transition(stores, invitation, 'decline', deps.clock.now());
}

async function usableInvitation(stores: InvitationStores, deps: Pick<InvitationDeps, 'clock'>, token: unknown): Promise<Invitation> {
  if (typeof token !== 'string' || !TOKEN_SHAPE.test(token)) throw badRequest(UNUSABLE_INVITATION.REVOKED);
  // Looked up by hash: the token itself is never compared character by character.
  const invitation = await stores.invitations.lockByTokenHash(hashSecret(token));
  if (!invitation) throw badRequest(UNUSABLE_INVITATION.REVOKED);
  const now = deps.clock.now();
  const status = currentInvitationStatus(invitation, now);
  // An expired row may still say PENDING: nothing sweeps them, the time decides.
  if (status !== 'PENDING') throw new InvitationUnusable(status);
  return invitation;
}

async function transition(stores: InvitationStores, invitation: Invitation, event: InvitationEvent, now: Date, acceptedBy?: string): Promise<InvitationStatus> {
  const from = currentInvitationStatus(invitation, now);
  const to = nextInvitationStatus(from, event);
  if (!to) throw conflict(`The invitation is ${from}; it can no longer be ${event === 'revoke' ? 'revoked' : `${event}ed`}`);
  await stores.invitations.setStatus(invitation.id, to, now, acceptedBy);
  return to;
}

/** Invalid input: a token whose invitation is no longer pending; `invitationStatus` says why. */
export class InvitationUnusable extends DomainError {
  constructor(readonly invitationStatus: Exclude<InvitationStatus, 'PENDING'>) {
    super('invalid_input', UNUSABLE_INVITATION[invitationStatus]);
  }
}
