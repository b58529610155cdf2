import type { Kysely } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { PluginEventPayload } from '../../kernel/events.ts';
import { messagingDeps, messagingStores } from '../../kernel/storage.ts';
import { sendHelpdeskMessage, systemActor } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import { replyOutOfOffice } from '../../../core/helpdesk/inboxes/out-of-office.ts';
import { trackConversation, type SlaDeps } from '../../../core/helpdesk/sla/tracking.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import type { EventSubscriber, PluginContext } from '../../kernel/plugin.ts';
import { conversationStore, helpdeskMessageStores } from '../conversations/store.ts';
import { helpdeskDb } from '../tables.ts';
import { inboxHoursStore } from './store.ts';
import { slaTrackingStores } from './tracking-store.ts';
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

/** When the event was recorded (in the transaction of the change, on the service's clock). */
async function recordedAt(db: Kysely<Database>, eventId: string): Promise<Date | undefined> {
  const row = await db.selectFrom('events').select('created_at').where('id', '=', eventId).executeTakeFirst();
  return row ? new Date(row.created_at) : undefined;
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
  await ctx.db.transaction().execute(async (trx) => {
    const at = await recordedAt(trx, event.eventId);
    const status =
      event.event === 'helpdesk.conversation.status_changed' && at && typeof data.toStatus === 'string'
        ? { fromStatus: String(data.fromStatus), toStatus: data.toStatus, at }
        : undefined;
    await trackConversation(slaTrackingStores(trx, ctx), slaDeps(ctx), event.workspaceId, data.conversationId!, { at, status });
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
    await ctx.db.transaction().execute((trx) => {
      const db = helpdeskDb(trx);
      return replyOutOfOffice(
        {
          hours: (inboxId) => inboxHoursStore(trx).get(inboxId),
          async zoneOf(workspaceId, inboxId) {
            const row = await db.selectFrom('helpdesk_inboxes').select('timezone').where('workspace_id', '=', workspaceId).where('id', '=', inboxId).executeTakeFirst();
            return row?.timezone;
          },
          conversation: (workspaceId, id) => conversationStore(trx).get(workspaceId, id),
          async claim(c) {
            const row = await db
              .insertInto('helpdesk_out_of_office_replies')
              .values({ conversation_id: c.conversationId, reopens_at: c.reopensAt, workspace_id: c.workspaceId, message_id: null, sent_at: c.sentAt })
              .onConflict((oc) => oc.columns(['conversation_id', 'reopens_at']).doNothing())
              .returning('conversation_id')
              .executeTakeFirst();
            return row !== undefined;
          },
          async setMessage(conversationId, reopensAt, messageId) {
            await db.updateTable('helpdesk_out_of_office_replies').set({ message_id: messageId }).where('conversation_id', '=', conversationId).where('reopens_at', '=', reopensAt).execute();
          },
          reply: (conversation, text) =>
            sendHelpdeskMessage(
              helpdeskMessageStores(trx, ctx),
              { stores: messagingStores(trx, ctx), deps: messagingDeps(ctx) },
              { clock: ctx.clock, ids: ctx.ids },
              systemActor(conversation.workspaceId),
              conversation.id,
              { content: text },
            ),
        },
        slaDeps(ctx),
        { workspaceId: event.workspaceId, conversationId: data.conversationId!, inboxId: data.inboxId!, message: { direction: 'incoming', createdAt: new Date(data.message!.createdAt!) } },
      );
    });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    console.warn(`[helpdesk] out-of-office reply of conversation ${data.conversationId} not sent: ${error.message}`);
  }
}

export const SLA_SUBSCRIBERS: EventSubscriber[] = [
  { event: 'helpdesk.conversation.created', handle: onTimingEvent },
  { event: 'helpdesk.message.created', handle: onTimingEvent },
  { event: 'helpdesk.conversation.status_changed', handle: onTimingEvent },
  { event: 'helpdesk.message.created', handle: onContactMessage },
];
