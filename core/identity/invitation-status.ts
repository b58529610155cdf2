import { nextState, type TransitionTable } from '../shared/transition-table.ts';

/**
 * The life of an invitation to join a workspace. It is PENDING until the invitee accepts or
 * declines it, an inviter revokes it (or a new invitation to the same email replaces it), or its
 * time runs out; every other state is final.
 */
export const INVITATION_STATUSES = ['PENDING', 'ACCEPTED', 'DECLINED', 'REVOKED', 'EXPIRED'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

export const INVITATION_EVENTS = ['accept', 'decline', 'revoke', 'expire'] as const;
export type InvitationEvent = (typeof INVITATION_EVENTS)[number];

/** Every allowed transition; a pair missing here is refused. */
export const INVITATION_TRANSITIONS: TransitionTable<InvitationStatus, InvitationEvent> = {
  PENDING: { accept: 'ACCEPTED', decline: 'DECLINED', revoke: 'REVOKED', expire: 'EXPIRED' },
  ACCEPTED: {},
  DECLINED: {},
  REVOKED: {},
  EXPIRED: {},
};

/** The status after `event`, or undefined when the invitation cannot take it in `status`. */
export function nextInvitationStatus(status: InvitationStatus, event: InvitationEvent): InvitationStatus | undefined {
  return nextState(INVITATION_TRANSITIONS, status, event);
}

/** A PENDING invitation past its expiry is EXPIRED, whether or not the row says so yet. */
export function currentInvitationStatus(invitation: { status: InvitationStatus; expiresAt: Date }, now: Date): InvitationStatus {
  return invitation.status === 'PENDING' && now.getTime() >= invitation.expiresAt.getTime() ? 'EXPIRED' : invitation.status;
}

/** What the invitee is told when an invitation can no longer be used. */
export const UNUSABLE_INVITATION: Record<Exclude<InvitationStatus, 'PENDING'>, string> = {
  ACCEPTED: 'This invitation has already been accepted.',
  DECLINED: 'This invitation was declined.',
  REVOKED: 'This invitation was withdrawn (or replaced by a newer one). Ask whoever invited you for a new one.',
  EXPIRED: 'This invitation has expired. Ask whoever invited you for a new one.',
};
