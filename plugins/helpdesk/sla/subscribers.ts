import type { PluginEventPayload } from '../../kernel/events.ts';
import { replyOutOfOffice } from '../../../core/helpdesk/inboxes/out-of-office.ts';
import { trackConversation, type SlaDeps } from '../../../core/helpdesk/sla/tracking.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import type { EventSubscriber, PluginContext } from '../../kernel/plugin.ts';
import { outOfOfficeStores } from './out-of-office-store.ts';
import { timingEventStores } from './tracking-store.ts';
import { intlZoneRules } from '../../kernel/time-zones.ts';

export function slaDeps(ctx: PluginContext): SlaDeps {
  return { clock: ctx.clock, zones: intlZoneRules };
}

interface EventData {
  accountId?: string;
  conversationId?: string;
  inboxId?: string;
  fromStatus?: string;
  toStatus?: string;
  message?: { direction?: string; createdAt?: string };
}

/**
 * `helpdesk.conversation.created`, `helpdesk.message.created`, `helpdesk.conversation.status_changed`:
 * the conversation's timing and SLA rounds are brought up to date (core/helpdesk/sla/tracking.ts),
 * in one transaction with the rounds' deadline jobs. Idempotent, whatever the order of events.
 */
export async function onTimingEvent(payload: unknown, ctx: PluginContext): Promise<void> {
  const event = payload as PluginEventPayload;
  const data = event.data as EventData | undefined;
  if (typeof data?.conversationId !== 'string') return;
  await ctx.storage.transaction(timingEventStores, async (stores) => {
    const at = await stores.recordedAt(event.eventId);
    const status =
      event.event === 'helpdesk.conversation.status_changed' && at && typeof data.toStatus === 'string'
        ? { fromStatus: String(data.fromStatus), toStatus: data.toStatus, at }
        : undefined;
    await trackConversation(stores.tracking, slaDeps(ctx), event.workspaceId, data.conversationId!, { at, status });
  });
}

/**
 * `helpdesk.message.created` of a contact's message while the inbox is closed: the out-of-office
 * reply (core/helpdesk/inboxes/out-of-office.ts), sent by the helpdesk itself (`systemActor`) through the
 * normal reply path. The claim and the reply share one transaction; a refusal of the reply path
 * (no connection, the network's AI holds the chat, a closed send window, no PRO plan) rolls both
 * back and is logged, without failing the job (a retry would be refused the same way).
 */
export async function onContactMessage(payload: unknown, ctx: PluginContext): Promise<void> {
  const event = payload as PluginEventPayload;
  const data = event.data as EventData | undefined;
  if (data?.message?.direction !== 'incoming' || typeof data.conversationId !== 'string' || typeof data.inboxId !== 'string' || !data.message.createdAt) return;
  try {
    await ctx.storage.transaction(outOfOfficeStores, (stores) =>
      replyOutOfOffice(
        stores,
        slaDeps(ctx),
        { workspaceId: event.workspaceId, conversationId: data.conversationId!, inboxId: data.inboxId!, message: { direction: 'incoming', createdAt: new Date(data.message!.createdAt!) } },
      ),
    );
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    ctx.log.warn({ conversationId: data.conversationId, error: { message: error.message } }, 'out-of-office reply not sent');
  }
}

export const SLA_SUBSCRIBERS: EventSubscriber[] = [
  { event: 'helpdesk.conversation.created', handle: onTimingEvent },
  { event: 'helpdesk.message.created', handle: onTimingEvent },
  { event: 'helpdesk.conversation.status_changed', handle: onTimingEvent },
  { event: 'helpdesk.message.created', handle: onContactMessage },
];
