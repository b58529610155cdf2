import type { PluginEventPayload } from '../../kernel/events.ts';
import { takeTurn } from '../../../core/helpdesk/bots/agent-bot-conversations.ts';
import { fanOutToBots } from '../../../core/helpdesk/bots/agent-bot-delivery.ts';
import { HELPDESK_EVENT_TYPES, type HelpdeskEventType } from '../../../core/helpdesk/events.ts';
import { dispatchDeps } from '../../kernel/webhooks.ts';
import type { DatabaseHandle } from '../../kernel/context.ts';
import type { EventSubscriber, PluginContext } from '../../kernel/plugin.ts';
import { agentBotConversationStores, botDeliveryStores } from './use-case-stores.ts';

type EventData = Record<string, unknown> & { type: HelpdeskEventType; accountId: string; conversationId?: unknown; inboxId?: unknown };

/**
 * Every helpdesk event, run by the worker's `plugins.events` job after the change committed
 * (the bots feature comes before assignment, so on `conversation.created` the bot has its turn
 * before round-robin looks at the conversation). First the bot's turn on a new conversation of
 * its inbox (whichever of the conversation's first events is handled first takes it, so the
 * contact's first message reaches the bot too), then a delivery to each bot that hears the
 * event. Idempotent: the turn is recorded once, deliveries are keyed by (bot, event).
 */
export async function onHelpdeskEventForBots(payload: unknown, ctx: PluginContext): Promise<void> {
  const event = payload as PluginEventPayload;
  const data = event.data as EventData;
  await ctx.storage.transaction(botEventStores, async (stores) => {
    if (typeof data.conversationId === 'string' && typeof data.inboxId === 'string' && data.type !== 'helpdesk.conversation.deleted') {
      await takeTurn(stores.turns, { clock: ctx.clock, ids: ctx.ids }, { conversationId: data.conversationId, inboxId: data.inboxId });
    }
    await fanOutToBots(stores.deliveries, dispatchDeps(ctx), { eventId: event.eventId, data });
  });
}

export const AGENT_BOT_SUBSCRIBERS: EventSubscriber[] = HELPDESK_EVENT_TYPES.map((event) => ({ event, handle: onHelpdeskEventForBots }));

/** Both parts of an event's work for the bots share one transaction: the turn and the deliveries. */
function botEventStores(db: DatabaseHandle, ctx: PluginContext) {
  return { turns: agentBotConversationStores(db, ctx), deliveries: botDeliveryStores(db, ctx) };
}
