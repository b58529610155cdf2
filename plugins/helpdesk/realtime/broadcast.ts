import type { RealtimeHub } from '../../kernel/realtime.ts';
import { conversationRoom, HELPDESK_NAMESPACE, inboxRoom, managersRoom, userRoom, workspaceRoom } from './rooms.ts';

/** A helpdesk event object (spec 6.5), or the realtime-only `helpdesk.notification.created` (6.7). */
export interface HelpdeskBroadcast {
  type: string;
  accountId: string;
  inboxId?: string | null;
  conversationId?: string | null;
  userId?: string | null;
  [field: string]: unknown;
}

/**
 * Spec 6.7: "The event name is the event type and the payload is the event object, the same
 * events as helpdesk webhooks, with one exception: `helpdesk.sla.missed` is not broadcast. Inbox
 * events reach inbox rooms, personal events the user room; CSAT and mention events go only to
 * their relevant rooms." `helpdesk.notification.created` is "emitted only to the recipient user's
 * room".
 *
 * - `helpdesk.sla.missed`: nowhere.
 * - `helpdesk.notification.created`: the room of `userId`; `helpdesk.mention.created`: the room of
 *   `mentionedUserId` (the person mentioned, not the author).
 * - An event of an inbox (every conversation, message and CSAT event): that inbox's room, the
 *   room of the workspace's Managers and above, and the conversation's room for those who
 *   subscribed to it. A socket in several of them gets the event once.
 * - An event of no inbox (labels): the workspace's room.
 */
export function helpdeskEventRooms(event: HelpdeskBroadcast): string[] {
  switch (event.type) {
    case 'helpdesk.sla.missed':
      return [];
    case 'helpdesk.notification.created':
      return personal(event.userId);
    case 'helpdesk.mention.created':
      return personal(event.mentionedUserId);
  }
  if (typeof event.inboxId === 'string' && event.inboxId !== '') {
    const rooms = [inboxRoom(event.inboxId), managersRoom(event.accountId)];
    if (typeof event.conversationId === 'string' && event.conversationId !== '') rooms.push(conversationRoom(event.conversationId));
    return rooms;
  }
  return [workspaceRoom(event.accountId)];
}

function personal(userId: unknown): string[] {
  return typeof userId === 'string' && userId !== '' ? [userRoom(userId)] : [];
}

/** Sends a helpdesk event to the websocket rooms it belongs in (called for every helpdesk event). */
export async function broadcastHelpdeskEvent(hub: RealtimeHub, data: HelpdeskBroadcast): Promise<void> {
  const rooms = helpdeskEventRooms(data);
  if (rooms.length === 0) return;
  await hub.emit(HELPDESK_NAMESPACE, rooms, data.type, data);
}
