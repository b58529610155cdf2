import type { Actor } from '../../identity/identity.ts';
import type { SendDeps, SendStores } from '../../messaging/send.ts';
import { holdersAfter, holdState, type BotHoldEvent, nextHoldState } from './agent-bot-hold.ts';
import type { AgentBot, AgentBotStore } from './agent-bots.ts';
import type { Conversation, HelpdeskMessage } from '../conversations/conversation.ts';
import { conversationNotFound, recordChanges, type ConversationDeps } from '../conversations/conversations.ts';
import { listHelpdeskMessages, sendHelpdeskMessage, systemActor, type HelpdeskMessageStores } from '../conversations/helpdesk-messages.ts';

/**
 * What an agent bot does with conversations (the table is in agent-bot-hold.ts):
 * - its turn: the first helpdesk event of a new conversation of an inbox it serves makes it take
 *   the conversation (`assigneeAgentBotId`), recorded as `assignee_changed` with
 *   `fromAgentBotId: null, toAgentBotId`, `actorUserId: null`. The turn comes once per
 *   conversation: taken, or declined when a person already has it;
 * - replies and private notes through the bot API, sent as an agent's reply is, with no person
 *   (`senderUserId: null`) and the bot named (`senderAgentBotId`);
 * - the handoff: the bot lets go (`assignee_changed` with `fromAgentBotId`, `toAgentBotId: null`)
 *   and automatic assignment picks a person (spec 3.7 rules, core/helpdesk/assignment/auto-assignment.ts).
 * Only conversations the bot holds are its: any other is 404 to it, whatever exists.
 *
 * Agents may take a bot's conversation over at any time by assigning a person
 * (`updateConversation`): the bot is cleared in the same change (agentTakeover).
 */
export interface AgentBotTurnStore {
  /** Whether the bot's turn on the conversation has passed (taken or declined). */
  passed(conversationId: string): Promise<boolean>;
  /** Records the turn once; false when it was recorded before. */
  record(turn: { conversationId: string; workspaceId: string; agentBotId: string; taken: boolean; at: Date }): Promise<boolean>;
}

export interface BotConversationStore {
  /** The conversation (any workspace), its row locked until the transaction ends. */
  lock(conversationId: string): Promise<Conversation | undefined>;
  /** Ids of the conversations the bot holds, in these inboxes or all when null. */
  heldBy(agentBotId: string, inboxIds: string[] | null): Promise<string[]>;
}

export interface AgentBotConversationStores extends HelpdeskMessageStores {
  agentBots: Pick<AgentBotStore, 'servingInbox'>;
  botTurns: AgentBotTurnStore;
  botConversations: BotConversationStore;
  /**
   * Automatic assignment of a conversation nobody holds to a person, in the caller's transaction
   * (core/helpdesk/assignment/auto-assignment.ts `autoAssign` with trigger `handoff`).
   */
  assignToPeople(conversationId: string): Promise<void>;
}

/** The bot as the sender of its messages: the helpdesk itself (no person), named on the message. */
export interface AgentBotActor extends Actor {
  agentBotId: string;
}

export function agentBotActor(bot: Pick<AgentBot, 'id' | 'workspaceId'>): AgentBotActor {
  return { ...systemActor(bot.workspaceId), agentBotId: bot.id };
}

/**
 * The bot's turn on a conversation (run for every helpdesk event of a conversation, before it is
 * delivered anywhere; idempotent). Nothing happens unless the inbox has a bot that was serving it
 * when the conversation was created and the turn has not passed. The conversation's row is
 * locked, so two events of one new conversation handled at once decide once.
 */
export async function takeTurn(stores: AgentBotConversationStores, deps: ConversationDeps, event: { conversationId: string; inboxId: string }): Promise<'taken' | 'declined' | null> {
  const serving = await stores.agentBots.servingInbox(event.inboxId);
  if (!serving || (await stores.botTurns.passed(event.conversationId))) return null;
  const conversation = await stores.botConversations.lock(event.conversationId);
  if (!conversation || conversation.inboxId !== event.inboxId) return null;
  // A conversation that was there before the bot was bound is people's business.
  if (conversation.createdAt.getTime() < serving.boundAt.getTime()) return null;
  if (await stores.botTurns.passed(conversation.id)) return null;
  const now = deps.clock.now();
  const holders = conversation.status === 'RESOLVED' ? null : holdersAfter(conversation, false, { type: 'take', botId: serving.bot.id });
  const taken = holders !== null && holdState(conversation, false) === 'NEW';
  await stores.botTurns.record({ conversationId: conversation.id, workspaceId: conversation.workspaceId, agentBotId: serving.bot.id, taken, at: now });
  if (!taken) return 'declined';
  const updated: Conversation = { ...conversation, ...holders, updatedAt: now };
  await stores.conversations.update(updated);
  await recordChanges(stores, conversation, updated, null);
  return 'taken';
}

/** A conversation the bot holds, locked for the change the bot makes; 404 otherwise. */
export async function heldConversation(stores: AgentBotConversationStores, bot: AgentBot, conversationId: string, event: BotHoldEvent): Promise<Conversation> {
  const conversation = await stores.botConversations.lock(conversationId);
  if (!conversation || conversation.workspaceId !== bot.workspaceId || conversation.assigneeAgentBotId !== bot.id) throw conversationNotFound();
  if (nextHoldState(holdState(conversation, true), event) === null) throw conversationNotFound();
  return conversation;
}

/** `POST /v3/helpdesk/agent-bot/conversations/{id}/messages`: a reply (or a private note) from the bot. */
export async function botReply(
  stores: AgentBotConversationStores,
  send: { stores: SendStores; deps: SendDeps },
  deps: ConversationDeps,
  bot: AgentBot,
  conversationId: string,
  input: { content: string; private?: boolean },
): Promise<HelpdeskMessage> {
  const conversation = await heldConversation(stores, bot, conversationId, 'reply');
  return sendHelpdeskMessage(stores, send, deps, agentBotActor(bot), conversation.id, { content: input.content, private: input.private });
}

/** The messages of a conversation the bot holds (the same cursor pagination as agents have). */
export async function botMessages(stores: AgentBotConversationStores, bot: AgentBot, conversationId: string, query: { limit?: string; cursor?: string }): Promise<HelpdeskMessage[]> {
  await heldConversation(stores, bot, conversationId, 'reply');
  return listHelpdeskMessages(stores, agentBotActor(bot), conversationId, query);
}

/** A conversation the bot holds, as agents see it. */
export async function botConversation(stores: AgentBotConversationStores, bot: AgentBot, conversationId: string): Promise<Conversation> {
  return heldConversation(stores, bot, conversationId, 'reply');
}

/**
 * `POST …/handoff`: the bot lets go of the conversation and automatic assignment picks a person
 * (who may be nobody: spec 3.7 leaves a conversation unassigned when no eligible agent is online).
 * Answers the conversation afterwards.
 */
export async function botHandoff(stores: AgentBotConversationStores, deps: ConversationDeps, bot: AgentBot, conversationId: string): Promise<Conversation> {
  const conversation = await heldConversation(stores, bot, conversationId, 'handoff');
  await letGo(stores, deps, conversation, null);
  await stores.assignToPeople(conversation.id);
  return (await stores.conversations.get(conversation.workspaceId, conversation.id))!;
}

/**
 * The bot stops serving inboxes (or is deleted): every conversation it holds there is handed over
 * to people, as by its own handoff but with the member who changed the bot as actor.
 */
export async function handOverHeld(stores: AgentBotConversationStores, deps: ConversationDeps, bot: AgentBot, inboxIds: string[] | null, actorUserId: string | null): Promise<number> {
  let count = 0;
  for (const id of await stores.botConversations.heldBy(bot.id, inboxIds)) {
    const conversation = await stores.botConversations.lock(id);
    if (!conversation || conversation.assigneeAgentBotId !== bot.id) continue;
    await letGo(stores, deps, conversation, actorUserId);
    await stores.assignToPeople(conversation.id);
    count += 1;
  }
  return count;
}

async function letGo(stores: AgentBotConversationStores, deps: ConversationDeps, conversation: Conversation, actorUserId: string | null): Promise<void> {
  const holders = holdersAfter(conversation, true, { type: 'handoff' })!;
  const updated: Conversation = { ...conversation, ...holders, updatedAt: deps.clock.now() };
  await stores.conversations.update(updated);
  await recordChanges(stores, conversation, updated, actorUserId);
}
