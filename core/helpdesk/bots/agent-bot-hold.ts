import { nextState, type TransitionTable } from '../../shared/transition-table.ts';

/**
 * Who holds a conversation of an inbox served by an agent bot (issue 7: "a bot bound to an inbox
 * ... takes the conversation first, hands over to humans"), as an explicit transition table.
 *
 * States, from the bot's side of one conversation:
 * - `NEW`: the bot has not had its turn yet and nobody holds the conversation;
 * - `BOT`: the bot holds it (`assigneeAgentBotId`); it alone answers through the bot API;
 * - `HUMAN`: people have it — the bot handed it over, an agent took it over by assigning a
 *   person, or a person was assigned before the bot's turn came.
 *
 * | from \ event | take            | reply | handoff | agentTakeover |
 * |--------------|-----------------|-------|---------|---------------|
 * | NEW          | BOT             | -     | -       | HUMAN         |
 * | BOT          | BOT (no change) | BOT   | HUMAN   | HUMAN         |
 * | HUMAN        | -               | -     | -       | HUMAN         |
 *
 * `-` is refused: a bot never replies to nor hands off a conversation it does not hold (the bot
 * API answers 404), and never takes back a conversation people have: its turn comes once per
 * conversation (the use case records it, so a replayed event or a later unassignment does not
 * make the conversation NEW again).
 */
export const BOT_HOLD_STATES = ['NEW', 'BOT', 'HUMAN'] as const;
export type BotHoldState = (typeof BOT_HOLD_STATES)[number];

export const BOT_HOLD_EVENTS = ['take', 'reply', 'handoff', 'agentTakeover'] as const;
export type BotHoldEvent = (typeof BOT_HOLD_EVENTS)[number];

export const BOT_HOLD_TRANSITIONS: TransitionTable<BotHoldState, BotHoldEvent> = {
  NEW: { take: 'BOT', agentTakeover: 'HUMAN' },
  BOT: { take: 'BOT', reply: 'BOT', handoff: 'HUMAN', agentTakeover: 'HUMAN' },
  HUMAN: { agentTakeover: 'HUMAN' },
};

/** The state after `event`, or null when the table refuses it. */
export function nextHoldState(state: BotHoldState, event: BotHoldEvent): BotHoldState | null {
  return nextState(BOT_HOLD_TRANSITIONS, state, event) ?? null;
}

/**
 * The state of a conversation as stored: held by a bot when `assigneeAgentBotId` is set; people's
 * when a person is assigned or the bot's turn has passed (`turnTaken`); otherwise still NEW.
 */
export function holdState(conversation: { assigneeUserId: string | null; assigneeAgentBotId: string | null }, turnTaken: boolean): BotHoldState {
  if (conversation.assigneeAgentBotId !== null) return 'BOT';
  if (conversation.assigneeUserId !== null || turnTaken) return 'HUMAN';
  return 'NEW';
}

/**
 * The holder fields after the event: taking sets the bot (a NEW conversation has no person);
 * handing off clears it and leaves nobody (automatic assignment may then pick a person); an
 * agent takeover puts the person in the bot's place. Null when the table refuses the event.
 */
export function holdersAfter(
  conversation: { assigneeUserId: string | null; assigneeAgentBotId: string | null },
  turnTaken: boolean,
  event: { type: 'take'; botId: string } | { type: 'reply' } | { type: 'handoff' } | { type: 'agentTakeover'; userId: string },
): { assigneeUserId: string | null; assigneeAgentBotId: string | null } | null {
  const state = holdState(conversation, turnTaken);
  if (nextHoldState(state, event.type) === null) return null;
  switch (event.type) {
    case 'take':
      return state === 'BOT' ? { ...pick(conversation) } : { assigneeUserId: null, assigneeAgentBotId: event.botId };
    case 'reply':
      return { ...pick(conversation) };
    case 'handoff':
      return { assigneeUserId: null, assigneeAgentBotId: null };
    case 'agentTakeover':
      return { assigneeUserId: event.userId, assigneeAgentBotId: null };
  }
}

function pick(c: { assigneeUserId: string | null; assigneeAgentBotId: string | null }) {
  return { assigneeUserId: c.assigneeUserId, assigneeAgentBotId: c.assigneeAgentBotId };
}
