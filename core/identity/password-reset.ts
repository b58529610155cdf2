import { forbidden, notFound } from '../shared/errors.ts';
import type { Actor, IdentityStore } from './identity.ts';
import type { MailMessage } from './invitation-mail.ts';
import { passwordResetLink, PASSWORD_RESET_MINUTES, type PasswordLinkDeps } from './passwords.ts';
import { authorize, rank, topRank, type Role } from './roles.ts';

/**
 * Password resets. A person who forgot their password asks for a link by mail (the
 * `/forgot-password` page, when `SMTP_URL` is set); without mail an Owner or Admin issues one
 * for a member of their workspace. Either link is a set-up link (passwords.ts) valid one hour
 * and only until a password is set with it: it carries a fingerprint of the password hash.
 */

/** The reset link for the person with this email, or undefined when nobody has it. */
export async function resetLinkForEmail(stores: { identity: IdentityStore }, deps: PasswordLinkDeps, email: string) {
  const found = await stores.identity.findCredentialsByEmail(email);
  if (!found) return undefined;
  return { user: found.user, ...passwordResetLink(deps, found.user.id, found.passwordHash) };
}

/**
 * An Owner or Admin's reset link for a member of their workspace (`POST /v3/members/{userId}/password-reset`).
 * 404 for anyone not a member here; 403 for a Manager or Agent, for an Admin and an Owner, and for
 * a member of another shared workspace where the actor is not Owner or Admin at or above them: the link lets whoever
 * holds it into every workspace of the person.
 */
export async function issuePasswordReset(
  stores: { identity: IdentityStore },
  deps: PasswordLinkDeps,
  actor: Actor,
  userId: string,
): Promise<{ url: string; expiresAt: Date }> {
  authorize(actor.roles, 'members', 'write');
  if (!canReset(actor.roles)) throw forbidden('Only an Owner or Admin can issue a password reset link');
  const target = await stores.identity.getMember(actor.workspaceId, userId);
  if (!target) throw notFound(`Member ${userId} not found`);
  if (topRank(target.roles) > topRank(actor.roles)) throw forbidden('You cannot reset the password of a member above your own role');
  const mine = new Map((await stores.identity.listWorkspacesOf(actor.userId)).map((w) => [w.id, w.roles] as const));
  for (const workspace of await stores.identity.listWorkspacesOf(userId)) {
    if (workspace.isPersonal || workspace.id === actor.workspaceId) continue;
    const roles = mine.get(workspace.id) ?? [];
    if (!canReset(roles) || topRank(workspace.roles) > topRank(roles)) {
      throw forbidden('This person also belongs to a workspace you do not administer; they can reset their password themselves (“Forgot password?”)');
    }
  }
  const credentials = await stores.identity.lockCredentials(userId);
  if (!credentials) throw notFound(`Member ${userId} not found`);
  return passwordResetLink(deps, userId, credentials.passwordHash);
}

function canReset(roles: readonly Role[]): boolean {
  return topRank(roles) >= rank('ADMIN');
}

/** The mail with a reset link. */
export function passwordResetMail(input: { to: string; url: string; expiresAt: Date }): MailMessage {
  return {
    to: input.to,
    subject: 'Reset your Switchboard password',
    text: [
      'Someone (hopefully you) asked to reset the password of your Switchboard account.',
      '',
      'Choose a new password here:',
      input.url,
      '',
      `The link works once, for ${PASSWORD_RESET_MINUTES} minutes (until ${input.expiresAt.toISOString()}).`,
      'If you did not ask for it, ignore this mail: your password stays as it is.',
    ].join('\n'),
  };
}
