import type { Actor } from '../../../core/identity/identity.ts';
import { seesEveryInbox } from '../../../core/helpdesk/inboxes/inboxes.ts';

/** Spec 6.7: "namespace `/helpdesk`". */
export const HELPDESK_NAMESPACE = '/helpdesk';

/**
 * The rooms of the `/helpdesk` namespace. Spec 6.7: "Automatic rooms: the user's own room,
 * workspace presence, and every inbox the user belongs to (Managers and above join every inbox of
 * the workspace). Conversation-only events need explicit subscription."
 *
 * Managers and above join one room per workspace instead of one per inbox: inbox events go to
 * it as well as to the inbox's room, so an inbox created after they connected is covered too.
 */
export const userRoom = (userId: string) => `user:${userId}`;
/** Presence updates and the events that belong to no inbox (labels). */
export const workspaceRoom = (workspaceId: string) => `workspace:${workspaceId}`;
export const inboxRoom = (inboxId: string) => `inbox:${inboxId}`;
export const managersRoom = (workspaceId: string) => `managers:${workspaceId}`;
export const conversationRoom = (conversationId: string) => `conversation:${conversationId}`;

/** The rooms a member's socket is in from the moment it connects. */
export function automaticRooms(actor: Actor, inboxIds: readonly string[]): string[] {
  const rooms = [userRoom(actor.userId), workspaceRoom(actor.workspaceId)];
  if (seesEveryInbox(actor)) rooms.push(managersRoom(actor.workspaceId));
  else rooms.push(...inboxIds.map(inboxRoom));
  return rooms;
}
