import { queueDelivery, type DeliveryEndpoint, type DispatchDeps, type DispatchStores } from '../../webhooks/dispatch.ts';
import type { AgentBot, AgentBotStore } from './agent-bots.ts';
import type { HelpdeskEventType } from '../events.ts';
import { helpdeskEnvelope } from '../webhooks/helpdesk-webhooks.ts';
import { HELPDESK_EVENT_HEADER, HELPDESK_SIGNATURE_HEADER, helpdeskSignature } from '../webhooks/webhook-signature.ts';

/**
 * A bot hears of its conversations on its own webhook, on the shared delivery engine (3 attempts,
 * backoff from 5 s, 10 s timeout, history) as a delivery target of its own, in the envelope and
 * with the signature of helpdesk webhooks (spec 6.5), keyed with the bot's signing secret.
 *
 * Who hears an event, decided when the event is delivered (after the bot's turn, see
 * agent-bot-conversations.ts `takeTurn`):
 * - `conversation.created`: the bot serving the conversation's inbox;
 * - `conversation.assignee_changed`: the bots it names (`fromAgentBotId`, `toAgentBotId`), so a
 *   bot hears that it took a conversation, and that it lost it (handoff, agent takeover);
 * - any other event of a conversation: the bot holding the conversation at that moment.
 * An event handled after the bot let go of the conversation is not its business any more, even
 * if it happened while the bot held it (the bot learnt of the end from `assignee_changed`).
 */
export const AGENT_BOT_TARGET = 'agent_bot';

export interface BotDeliveryStores extends Pick<DispatchStores, 'deliveries' | 'outbox'> {
  agentBots: Pick<AgentBotStore, 'find' | 'servingInbox'>;
  /** Who holds the conversation now (undefined once it is deleted). */
  holderOf(conversationId: string): Promise<string | null | undefined>;
}

type EventData = Record<string, unknown> & { type: HelpdeskEventType; accountId: string; conversationId?: unknown; inboxId?: unknown };

export async function botsHearing(stores: BotDeliveryStores, data: EventData): Promise<AgentBot[]> {
  const ids = new Set<string>();
  if (data.type === 'helpdesk.conversation.created' && typeof data.inboxId === 'string') {
    const serving = await stores.agentBots.servingInbox(data.inboxId);
    if (serving) ids.add(serving.bot.id);
  }
  if (data.type === 'helpdesk.conversation.assignee_changed') {
    for (const field of ['fromAgentBotId', 'toAgentBotId']) if (typeof data[field] === 'string') ids.add(data[field] as string);
  }
  if (typeof data.conversationId === 'string') {
    const holder = await stores.holderOf(data.conversationId);
    if (holder) ids.add(holder);
  }
  const bots: AgentBot[] = [];
  for (const id of ids) {
    const bot = await stores.agentBots.find(id);
    // A bot hears only its own workspace's events.
    if (bot && bot.workspaceId === data.accountId) bots.push(bot);
  }
  return bots;
}

/**
 * One logged helpdesk event to the bots that hear it: one delivery each. Idempotent: a delivery's
 * id comes from (bot, event), so running it again adds nothing.
 */
export async function fanOutToBots(stores: BotDeliveryStores, deps: DispatchDeps, logged: { eventId: string; data: EventData }): Promise<number> {
  const bots = await botsHearing(stores, logged.data);
  if (bots.length === 0) return 0;
  const body = helpdeskEnvelope(logged.data.type, logged.data, deps.clock.now());
  for (const bot of bots) {
    await queueDelivery(stores, deps, { webhookId: bot.id, workspaceId: bot.workspaceId, target: AGENT_BOT_TARGET, event: logged.data.type, eventIds: [logged.eventId], body });
  }
  return bots.length;
}

/** Where a bot's delivery goes now: its current webhook URL, signed with its current secret. */
export function agentBotEndpoint(bot: AgentBot, delivery: { id: string; event: string }): DeliveryEndpoint {
  return {
    url: bot.webhookUrl,
    headers: (body) => ({
      'content-type': 'application/json',
      'user-agent': 'Switchboard-Webhooks/1',
      [HELPDESK_EVENT_HEADER]: delivery.event,
      [HELPDESK_SIGNATURE_HEADER]: helpdeskSignature(bot.signingSecret, body),
      'x-switchboard-delivery': delivery.id,
    }),
  };
}
