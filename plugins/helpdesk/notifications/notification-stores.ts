import type { Kysely, Selectable } from 'kysely';
import { camelCased, insertedIfAbsent, pageOfRows, snakeCased, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { Role } from '../../../core/identity/roles.ts';
import type { MentionStores } from '../../../core/helpdesk/notifications/mentions.ts';
import { NOTIFICATION_ANNOUNCE_QUEUE, type Notification, type NotificationStore, type NotifyStores } from '../../../core/helpdesk/notifications/notifications.ts';
import { conversationStore, helpdeskMessageStore } from '../conversations/store.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { attachmentStore } from '../attachments/store.ts';
import { helpdeskDb, type HelpdeskNotificationsTable } from '../tables.ts';

export function toNotification(row: Selectable<HelpdeskNotificationsTable>): Notification {
  return camelCased(row);
}

export function notificationStore(base: Kysely<Database>): NotificationStore {
  const db = helpdeskDb(base);
  const own = (workspaceId: string, userId: string) => db.selectFrom('helpdesk_notifications').where('workspace_id', '=', workspaceId).where('user_id', '=', userId);
  return {
    async insertIfAbsent(n) {
      return insertedIfAbsent(db.insertInto('helpdesk_notifications').values(snakeCased(n)).onConflict((oc) => oc.constraint('helpdesk_notifications_event_user_key').doNothing()));
    },
    async list(workspaceId, userId, request, filters) {
      let query = own(workspaceId, userId);
      if (filters.unread) query = query.where('read_at', 'is', null);
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), toNotification);
    },
    async get(workspaceId, userId, id) {
      if (!isUuid(id)) return undefined;
      const row = await own(workspaceId, userId).selectAll().where('id', '=', id).executeTakeFirst();
      return row && toNotification(row);
    },
    async markRead(workspaceId, userId, id, at) {
      if (!isUuid(id)) return undefined;
      await db.updateTable('helpdesk_notifications').set({ read_at: at }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).where('id', '=', id).where('read_at', 'is', null).execute();
      return this.get(workspaceId, userId, id);
    },
    async markAllRead(workspaceId, userId, at) {
      const result = await db
        .updateTable('helpdesk_notifications')
        .set({ read_at: at })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .where('read_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async unreadCount(workspaceId, userId) {
      const { count } = await own(workspaceId, userId).where('read_at', 'is', null).select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
      return Number(count);
    },
  };
}

/** A member's roles in the workspace and whether they belong to the inbox. */
async function standing(base: Kysely<Database>, workspaceId: string, inboxId: string, userId: string): Promise<{ roles: Role[]; inboxMember: boolean } | undefined> {
  if (!isUuid(userId)) return undefined;
  const membership = await base.selectFrom('memberships').select('roles').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
  if (!membership) return undefined;
  const member = await helpdeskDb(base).selectFrom('helpdesk_inbox_members').select('user_id').where('inbox_id', '=', inboxId).where('user_id', '=', userId).executeTakeFirst();
  return { roles: membership.roles as Role[], inboxMember: member !== undefined };
}

/** The notification routes' ports: the caller's own notifications. */
export function notificationStores(base: Kysely<Database>) {
  return { notifications: notificationStore(base) };
}

/**
 * What announcing a notification reads on the pool: the notification by id alone (the job names
 * it; one deleted since is not found), and the message it is about with its attachments.
 */
export function announcementStores(base: Kysely<Database>, ctx: PluginContext) {
  return {
    async notification(id: string): Promise<Notification | undefined> {
      const row = await helpdeskDb(base).selectFrom('helpdesk_notifications').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toNotification(row);
    },
    messages: helpdeskMessageStore(base),
    attachments: attachmentStore(base, ctx),
  };
}

export type AnnouncementStores = ReturnType<typeof announcementStores>;

/** The ports of notifying, bound to one transaction: the announcement is queued in it (the outbox). */
export function notifyStores(base: Kysely<Database>, ctx: PluginContext): NotifyStores {
  const outbox = ctx.queue.outbox(base);
  return {
    notifications: notificationStore(base),
    conversations: conversationStore(base),
    messages: helpdeskMessageStore(base),
    standing: (workspaceId, inboxId, userId) => standing(base, workspaceId, inboxId, userId),
    async announce(notification) {
      await outbox.enqueue(NOTIFICATION_ANNOUNCE_QUEUE, { notificationId: notification.id }, { dedupeKey: notification.id });
    },
  };
}

export function mentionStores(base: Kysely<Database>, ctx: PluginContext): MentionStores {
  const db = helpdeskDb(base);
  return {
    conversations: conversationStore(base),
    messages: helpdeskMessageStore(base),
    events: helpdeskEventLog(base, ctx),
    async mentionable(workspaceId, inboxId) {
      const rows = await db
        .selectFrom('memberships as ms')
        .innerJoin('users as u', 'u.id', 'ms.user_id')
        .leftJoin('helpdesk_inbox_members as im', (join) => join.onRef('im.user_id', '=', 'ms.user_id').on('im.inbox_id', '=', inboxId))
        .select(['u.id', 'u.email', 'ms.roles', 'im.inbox_id'])
        .where('ms.workspace_id', '=', workspaceId)
        .execute();
      return rows.map((r) => ({ userId: r.id, email: r.email, roles: r.roles as Role[], inboxMember: r.inbox_id !== null }));
    },
    mentions: {
      async insertIfAbsent(m) {
        return insertedIfAbsent(db.insertInto('helpdesk_mentions').values(snakeCased(m)).onConflict((oc) => oc.constraint('helpdesk_mentions_message_user_key').doNothing()));
      },
    },
  };
}
