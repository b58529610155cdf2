import type { Kysely } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { DeliveryTargetFinder } from '../../kernel/webhooks.ts';
import { deliveryStore } from '../../kernel/webhooks.ts';
import { autoAssign } from '../../../core/helpdesk/assignment/auto-assignment.ts';
import { handOverHeld, type AgentBotConversationStores } from '../../../core/helpdesk/bots/agent-bot-conversations.ts';
import { agentBotEndpoint, type BotDeliveryStores } from '../../../core/helpdesk/bots/agent-bot-delivery.ts';
import type { AgentBotStores } from '../../../core/helpdesk/bots/agent-bots.ts';
import type { ConversationDeps } from '../../../core/helpdesk/conversations/conversations.ts';
import type { DispatchStores } from '../../../core/webhooks/dispatch.ts';
import { helpdeskMessageStores } from '../conversations/store.ts';
import { assignmentDeps, assignmentStores } from '../assignment/store.ts';
import { inboxStore, workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { agentBotStore, agentBotTurnStore, botConversationStore, conversationHolder } from './agent-bot-store.ts';

/** The ports of the bot use cases on conversations, bound to one transaction. */
export function agentBotConversationStores(trx: Kysely<Database>, ctx: PluginContext): AgentBotConversationStores {
  return {
    ...helpdeskMessageStores(trx, ctx),
    agentBots: agentBotStore(trx, ctx),
    botTurns: agentBotTurnStore(trx),
    botConversations: botConversationStore(trx),
    async assignToPeople(conversationId) {
      // Round-robin among the inbox's people (spec 3.7), recorded with `actorUserId: null`.
      await autoAssign(assignmentStores(trx, ctx), assignmentDeps(ctx), conversationId, 'handoff');
    },
  };
}

/** The ports of the bot management use cases; releasing conversations hands them to people. */
export function agentBotStores(trx: Kysely<Database>, ctx: PluginContext): AgentBotStores & Pick<DispatchStores, 'deliveries' | 'outbox'> {
  const deps: ConversationDeps = { clock: ctx.clock, ids: ctx.ids };
  return {
    agentBots: agentBotStore(trx, ctx),
    inboxes: inboxStore(trx, ctx.box),
    plans: workspacePlans(trx),
    deliveries: deliveryStore(trx),
    outbox: ctx.queue.outbox(trx),
    releaseConversations: (bot, inboxIds, actorUserId) => handOverHeld(agentBotConversationStores(trx, ctx), deps, bot, inboxIds, actorUserId),
  };
}

/** Who hears an event among the bots, and the delivery engine's stores. */
export function botDeliveryStores(trx: Kysely<Database>, ctx: PluginContext): BotDeliveryStores {
  return {
    agentBots: agentBotStore(trx, ctx),
    holderOf: (conversationId) => conversationHolder(trx, conversationId),
    deliveries: deliveryStore(trx),
    outbox: ctx.queue.outbox(trx),
  };
}

/** How the base's delivery engine finds a bot's endpoint (`Plugin.deliveryTargets`). */
export const agentBotDeliveryTarget: DeliveryTargetFinder = (db, ctx) => ({
  async find(delivery) {
    const bot = await agentBotStore(db, ctx).find(delivery.webhookId);
    return bot && agentBotEndpoint(bot, delivery);
  },
});
