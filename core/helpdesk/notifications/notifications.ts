import type { Actor } from '../../identity/identity.ts';
import { authorize, type Role } from '../../identity/roles.ts';
import { notFound } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import type { Conversation } from '../conversations/conversation.ts';
import { seesEveryInbox } from '../inboxes/inboxes.ts';

/**
 * In-app notifications (issue 7 item 6; spec 6.7 `helpdesk.notification.created`): what a member
 * is told about personally. Each one comes from one helpdesk event (its `sourceEventId`), and one
 * event tells a member at most once; the kinds (ours):
 *
 * | type                      | from the event                              | recipient                                   | secondary actor |
 * |---------------------------|---------------------------------------------|---------------------------------------------|-----------------|
 * | `mention`                 | `helpdesk.mention.created`                  | `mentionedUserId`, unless they wrote it     | user (author)   |
 * | `assigned`                | `helpdesk.conversation.assignee_changed`    | `toAssigneeUserId`, unless they did it      | user (actor)    |
 * | `new_message_in_assigned` | `helpdesk.message.created`, incoming        | the conversation's assignee at that time    | contact         |
 *
 * The primary actor is always the conversation. Nobody is notified of what they did themselves,
 * nor about a conversation they cannot see (an Agent outside its inbox).
 */
export const NOTIFICATION_TYPES = ['mention', 'assigned', 'new_message_in_assigned'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
export const PRIMARY_ACTOR_TYPES = ['conversation'] as const;
export const SECONDARY_ACTOR_TYPES = ['user', 'contact'] as const;
export type SecondaryActorType = (typeof SECONDARY_ACTOR_TYPES)[number];

export interface Notification {
  id: string;
  workspaceId: string;
  userId: string;
  type: NotificationType;
  primaryActorType: 'conversation';
  primaryActorId: string;
  secondaryActorType: SecondaryActorType | null;
  secondaryActorId: string | null;
  conversationId: string;
  /** The message it is about (the note of a mention, the contact's message), if any. */
  messageId: string | null;
  /** The helpdesk event it came from: one notification per event and recipient. */
  sourceEventId: string;
  readAt: Date | null;
  createdAt: Date;
}

/** A helpdesk event as subscribers receive it (the wire form: ids as strings, the message hydrated). */
export interface NotifyingEvent {
  type: string;
  accountId: string;
  conversationId?: string;
  [field: string]: unknown;
}

export type NotificationDraft = Pick<Notification, 'userId' | 'type' | 'secondaryActorType' | 'secondaryActorId' | 'messageId'>;

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * Who an event notifies, and of what (the table above); null when nobody. Pure: `assigneeUserId`
 * is the conversation's assignee when the event is handled (only incoming messages need it).
 */
export function notificationDraft(event: NotifyingEvent, assigneeUserId: string | null): NotificationDraft | null {
  const actor = str(event.actorUserId);
  switch (event.type) {
    case 'helpdesk.mention.created': {
      const userId = str(event.mentionedUserId);
      if (userId === null || userId === actor) return null;
      return { userId, type: 'mention', secondaryActorType: actor ? 'user' : null, secondaryActorId: actor, messageId: str(event.messageId) };
    }
    case 'helpdesk.conversation.assignee_changed': {
      const userId = str(event.toAssigneeUserId);
      if (userId === null || userId === str(event.fromAssigneeUserId) || userId === actor) return null;
      return { userId, type: 'assigned', secondaryActorType: actor ? 'user' : null, secondaryActorId: actor, messageId: null };
    }
    case 'helpdesk.message.created': {
      const message = event.message as { id?: unknown; direction?: unknown } | undefined;
      if (message?.direction !== 'incoming' || assigneeUserId === null) return null;
      return { userId: assigneeUserId, type: 'new_message_in_assigned', secondaryActorType: null, secondaryActorId: null, messageId: str(message.id) };
    }
  }
  return null;
}

export interface NotificationStore {
  /** False when the recipient already has the notification of that event (a rerun). */
  insertIfAbsent(notification: Notification): Promise<boolean>;
  /** Newest first; `unread`: only those not read. */
  list(workspaceId: string, userId: string, request: PageRequest, filters: { unread: boolean }): Promise<Page<Notification>>;
  get(workspaceId: string, userId: string, id: string): Promise<Notification | undefined>;
  /** Sets `read_at` where it is not set yet; answers the notification as it now is. */
  markRead(workspaceId: string, userId: string, id: string, at: Date): Promise<Notification | undefined>;
  /** Marks every unread one read; answers how many. */
  markAllRead(workspaceId: string, userId: string, at: Date): Promise<number>;
  unreadCount(workspaceId: string, userId: string): Promise<number>;
}

/** The queue of the job that tells the recipient's sockets (`helpdesk.notification.created`). */
export const NOTIFICATION_ANNOUNCE_QUEUE = 'helpdesk.notifications.announce';

export interface NotifyStores {
  notifications: NotificationStore;
  conversations: { get(workspaceId: string, id: string): Promise<Conversation | undefined> };
  messages: { get(conversationId: string, id: string): Promise<unknown | undefined> };
  /** The member's roles and whether they belong to the inbox; undefined when not a member of the workspace. */
  standing(workspaceId: string, inboxId: string, userId: string): Promise<{ roles: Role[]; inboxMember: boolean } | undefined>;
  /** Queues `helpdesk.notification.created` to the recipient's room, in this transaction (the outbox). */
  announce(notification: Notification): Promise<void>;
}

export interface NotifyDeps {
  clock: Clock;
  ids: IdGen;
}

/**
 * Turns one helpdesk event into its notification, if any (run by the worker after the event's
 * transaction committed). Idempotent: the notification is keyed on (recipient, event), and it
 * is announced only when it is new, in the same transaction, so a rerun announces nothing twice
 * and a crash loses no announcement.
 */
export async function notifyOf(stores: NotifyStores, deps: NotifyDeps, sourceEventId: string, event: NotifyingEvent): Promise<Notification | null> {
  const conversationId = str(event.conversationId);
  if (conversationId === null) return null;
  const conversation = await stores.conversations.get(event.accountId, conversationId);
  if (!conversation) return null;
  const draft = notificationDraft(event, conversation.assigneeUserId);
  if (!draft) return null;
  // The note or message may have been deleted since the event: nothing left to point at (a retry
  // after a deletion racing the insert lands here too).
  if (draft.messageId !== null && !(await stores.messages.get(conversation.id, draft.messageId))) return null;
  const standing = await stores.standing(conversation.workspaceId, conversation.inboxId, draft.userId);
  if (!standing || !(standing.inboxMember || seesEveryInbox({ userId: draft.userId, workspaceId: conversation.workspaceId, roles: standing.roles }))) return null;
  const notification: Notification = {
    id: deps.ids.next(),
    workspaceId: conversation.workspaceId,
    userId: draft.userId,
    type: draft.type,
    primaryActorType: 'conversation',
    primaryActorId: conversation.id,
    // An incoming message's sender is the conversation's contact.
    secondaryActorType: draft.type === 'new_message_in_assigned' ? 'contact' : draft.secondaryActorType,
    secondaryActorId: draft.type === 'new_message_in_assigned' ? conversation.contactId : draft.secondaryActorId,
    conversationId: conversation.id,
    messageId: draft.messageId,
    sourceEventId,
    readAt: null,
    createdAt: deps.clock.now(),
  };
  if (!(await stores.notifications.insertIfAbsent(notification))) return null;
  await stores.announce(notification);
  return notification;
}

const notificationNotFound = () => notFound('Notification not found');

/**
 * The caller's own notifications in the workspace. Reading and marking read are open to every
 * member on every plan: they touch only the caller's own list, not the shared helpdesk (and a
 * workspace that left the PRO plan can still clear what it was told).
 */
export async function listNotifications(stores: Pick<NotifyStores, 'notifications'>, actor: Actor, request: PageRequest, filters: { unread: boolean }): Promise<Page<Notification>> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  return stores.notifications.list(actor.workspaceId, actor.userId, request, filters);
}

/** Marks one read (already read: unchanged, it keeps its first `readAt`); another member's is 404. */
export async function markNotificationRead(stores: Pick<NotifyStores, 'notifications'>, deps: Pick<NotifyDeps, 'clock'>, actor: Actor, id: string): Promise<Notification> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  const notification = await stores.notifications.markRead(actor.workspaceId, actor.userId, id, deps.clock.now());
  if (!notification) throw notificationNotFound();
  return notification;
}

export async function markAllNotificationsRead(stores: Pick<NotifyStores, 'notifications'>, deps: Pick<NotifyDeps, 'clock'>, actor: Actor): Promise<number> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  return stores.notifications.markAllRead(actor.workspaceId, actor.userId, deps.clock.now());
}

export async function unreadNotificationCount(stores: Pick<NotifyStores, 'notifications'>, actor: Actor): Promise<number> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  return stores.notifications.unreadCount(actor.workspaceId, actor.userId);
}
