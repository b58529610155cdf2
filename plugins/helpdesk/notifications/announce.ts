import type { PluginContext } from '../../kernel/context.ts';
import type { JobDefinition } from '../../kernel/jobs.ts';
import { NOTIFICATION_ANNOUNCE_QUEUE, type Notification } from '../../../core/helpdesk/notifications/notifications.ts';
import { withAttachments } from '../../../core/helpdesk/conversations/message-attachments.ts';
import { broadcastHelpdeskEvent } from '../realtime/broadcast.ts';
import { presentMessage } from '../conversations/views.ts';
import { announcementStores, type AnnouncementStores } from './notification-stores.ts';

/**
 * Spec 6.7: "Extra personal event `helpdesk.notification.created`: emitted only to the recipient
 * user's room after an in-app notification is created. Payload: `accountId`, `userId`,
 * `notificationId`, `notificationType`, primary actor type and id, optional secondary actor type
 * and id, `createdAt`, optionally a hydrated `message`. It is not sent to helpdesk webhooks."
 * Ours besides: `type` (as every helpdesk event object), `conversationId`. The secondary actor's
 * fields are left out when there is none; `message` is there when the notification is about one.
 */
export async function notificationCreatedPayload(stores: AnnouncementStores, n: Notification): Promise<Record<string, unknown>> {
  const payload: Record<string, unknown> = {
    type: 'helpdesk.notification.created',
    accountId: n.workspaceId,
    userId: n.userId,
    notificationId: n.id,
    notificationType: n.type,
    primaryActorType: n.primaryActorType,
    primaryActorId: n.primaryActorId,
    ...(n.secondaryActorType !== null && { secondaryActorType: n.secondaryActorType, secondaryActorId: n.secondaryActorId }),
    conversationId: n.conversationId,
    createdAt: n.createdAt.toISOString(),
  };
  if (n.messageId !== null) {
    const message = await stores.messages.get(n.conversationId, n.messageId);
    if (message) payload.message = presentMessage((await withAttachments(stores, [message]))[0]!);
  }
  return payload;
}

/**
 * Announces a notification to its recipient's sockets on every server process. Not a helpdesk
 * event: it is not in the event log and no webhook hears it. A retried job may announce twice
 * (at least once, as the other realtime events); a notification deleted since (its conversation
 * went) is not announced.
 */
export function notificationJobs(ctx: PluginContext): JobDefinition[] {
  return [
    {
      queue: NOTIFICATION_ANNOUNCE_QUEUE,
      retryLimit: 5,
      retryDelay: 1,
      retryBackoff: true,
      expireInSeconds: 30,
      concurrency: 2,
      batchSize: 10,
      handle: async (data: { notificationId: string }) => {
        if (!ctx.realtime) return;
        const stores = ctx.storage.read(announcementStores);
        const notification = await stores.notification(data.notificationId);
        if (!notification) return;
        const payload = await notificationCreatedPayload(stores, notification);
        await broadcastHelpdeskEvent(ctx.realtime, payload as { type: string; accountId: string; userId: string });
      },
    },
  ];
}
