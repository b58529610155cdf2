import type { EventSubscriber, PluginContext } from '../../kernel/plugin.ts';
import type { PluginEventPayload } from '../../kernel/events.ts';
import { recordMentions } from '../../../core/helpdesk/notifications/mentions.ts';
import { notifyOf, type NotifyingEvent } from '../../../core/helpdesk/notifications/notifications.ts';
import { mentionStores, notifyStores } from './notification-stores.ts';

type EventData = NotifyingEvent & { message?: { id?: string; private?: boolean; direction?: string } };

/**
 * A private note was written or edited: its @mentions are recorded (`helpdesk.mention.created`,
 * once per note and member, so a rerun or an edit keeping a mention adds nothing).
 */
export async function onNoteWritten(payload: unknown, ctx: PluginContext): Promise<void> {
  const data = (payload as PluginEventPayload).data as EventData;
  const message = data.message;
  if (message?.private !== true || typeof message.id !== 'string' || typeof data.conversationId !== 'string') return;
  const ref = { workspaceId: data.accountId, conversationId: data.conversationId, messageId: message.id };
  await ctx.storage.transaction(mentionStores, (stores) => recordMentions(stores, ctx, ref));
}

/** An event that may tell a member something personally (core/helpdesk/notifications/notifications.ts) becomes their notification. */
export async function onNotifyingEvent(payload: unknown, ctx: PluginContext): Promise<void> {
  const event = payload as PluginEventPayload;
  const data = event.data as EventData;
  if (data.type === 'helpdesk.message.created' && data.message?.direction !== 'incoming') return;
  await ctx.storage.transaction(notifyStores, (stores) => notifyOf(stores, ctx, event.eventId, data));
}

export const NOTIFICATION_SUBSCRIBERS: EventSubscriber[] = [
  { event: 'helpdesk.message.created', handle: onNoteWritten },
  { event: 'helpdesk.message.updated', handle: onNoteWritten },
  { event: 'helpdesk.mention.created', handle: onNotifyingEvent },
  { event: 'helpdesk.conversation.assignee_changed', handle: onNotifyingEvent },
  { event: 'helpdesk.message.created', handle: onNotifyingEvent },
];
