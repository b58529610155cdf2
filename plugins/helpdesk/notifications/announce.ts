import type { PluginContext } from '../../kernel/context.ts';
import type { JobDefinition } from '../../kernel/jobs.ts';
import { NOTIFICATION_ANNOUNCE_QUEUE, type Notification } from '../../../core/helpdesk/notifications/notifications.ts';
import { withAttachments } from '../../../core/helpdesk/conversations/message-attachments.ts';
import { attachmentStore } from '../attachments/store.ts';
import { helpdeskMessageStore } from '../conversations/store.ts';
import { broadcastHelpdeskEvent } from '../realtime/broadcast.ts';
import { helpdeskDb } from '../tables.ts';
import { presentMessage } from '../conversations/views.ts';
import { toNotification } from './notification-stores.ts';

/**
 * Spec 6.7: "Extra personal event `helpdesk.notification.created`: emitted only to the recipient
 * user's room after an in-app notification is created. Payload: `accountId`, `userId`,
 * `notificationId`, `notificationType`, primary actor type and id, optional secondary actor type
 * and id, `createdAt`, optionally a hydrated `message`. It is not sent to helpdesk webhooks."
 * Ours besides: `type` (as every helpdesk event object), `conversationId`. The secondary actor's
 * fields are left out when there is none; `message` is there when the notification is about one.
 */
export async function notificationCreatedPayload(ctx: PluginContext, n: Notification): Promise<Record<string, unknown>> {
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
    const message = await helpdeskMessageStore(ctx.db).get(n.conversationId, n.messageId);
    if (message) payload.message = presentMessage((await withAttachments({ attachments: attachmentStore(ctx.db, ctx) }, [message]))[0]!);
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
        const row = await helpdeskDb(ctx.db).selectFrom('helpdesk_notifications').selectAll().where('id', '=', data.notificationId).executeTakeFirst();
        if (!row) return;
        const payload = await notificationCreatedPayload(ctx, toNotification(row));
        await broadcastHelpdeskEvent(ctx.realtime, payload as { type: string; accountId: string; userId: string });
      },
    },
  ];
}
