import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { BOT_HOLD_EVENTS, BOT_HOLD_STATES, BOT_HOLD_TRANSITIONS, holdersAfter, holdState, nextHoldState, type BotHoldEvent, type BotHoldState } from '../../core/helpdesk/bots/agent-bot-hold.ts';
import { botHandoff, handOverHeld, heldConversation, takeTurn, type AgentBotConversationStores } from '../../core/helpdesk/bots/agent-bot-conversations.ts';
import type { AgentBot } from '../../core/helpdesk/bots/agent-bots.ts';
import { updateConversation, type Conversation } from '../../core/helpdesk/conversations/conversations.ts';
import { newConversation } from '../../core/helpdesk/conversations/conversation.ts';
import type { HelpdeskEvent } from '../../core/helpdesk/events.ts';
import { DomainError } from '../../core/shared/errors.ts';

/**
 * Who holds a conversation of an inbox served by an agent bot (core/helpdesk/bots/agent-bot-hold.ts),
 * against a model written from the words of the issue and the brief, not from the table:
 *
 * - issue 7: "a bot bound to an inbox … takes the conversation first, hands over to humans;
 *   assignment events carry `fromAgentBotId`/`toAgentBotId`" (spec 6.5);
 * - the bot takes a new conversation of its inbox (once: a replayed event changes nothing), unless
 *   a person already has it; it never takes back a conversation people have;
 * - "a bot never replies to a conversation it does not hold" (the bot API answers 404);
 * - the handoff clears the bot and automatic assignment picks a person;
 * - "while a bot holds a conversation, agents may still take it over by assigning a person (that
 *   clears the bot)"; unassigning a person does not give the conversation back to the bot.
 */

/** Model: the bot holds it, the person who has it (or nobody), whether the bot's turn has passed. */
interface Model {
  bot: boolean;
  person: string | null;
  turnPassed: boolean;
}

function modelState(m: Model): BotHoldState {
  if (m.bot) return 'BOT';
  return m.person !== null || m.turnPassed ? 'HUMAN' : 'NEW';
}

describe('the transition table against the documented meaning', () => {
  test('every (state, event) pair', () => {
    const expected: Record<BotHoldState, Record<BotHoldEvent, BotHoldState | null>> = {
      // A new conversation: the bot takes it, or a person was first.
      NEW: { take: 'BOT', reply: null, handoff: null, agentTakeover: 'HUMAN' },
      // The bot's: it may answer, hand over, be taken over; taking again changes nothing.
      BOT: { take: 'BOT', reply: 'BOT', handoff: 'HUMAN', agentTakeover: 'HUMAN' },
      // People's: the bot neither answers, hands over nor takes back; people reassign among themselves.
      HUMAN: { take: null, reply: null, handoff: null, agentTakeover: 'HUMAN' },
    };
    expect([...BOT_HOLD_STATES].sort()).toEqual(['BOT', 'HUMAN', 'NEW']);
    for (const state of BOT_HOLD_STATES) {
      for (const event of BOT_HOLD_EVENTS) {
        expect({ state, event, to: nextHoldState(state, event) }).toEqual({ state, event, to: expected[state][event] });
        expect(BOT_HOLD_TRANSITIONS[state][event] ?? null).toBe(expected[state][event]);
      }
    }
  });

  test('holders after an event never name a person and a bot at once, and match the state they lead to', () => {
    const holders = fc.oneof(
      fc.constant({ assigneeUserId: null, assigneeAgentBotId: null }),
      fc.constant({ assigneeUserId: 'u1', assigneeAgentBotId: null }),
      fc.constant({ assigneeUserId: null, assigneeAgentBotId: 'b1' }),
    );
    const event = fc.oneof(
      fc.constant({ type: 'take' as const, botId: 'b1' }),
      fc.constant({ type: 'reply' as const }),
      fc.constant({ type: 'handoff' as const }),
      fc.constantFrom('u1', 'u2').map((userId) => ({ type: 'agentTakeover' as const, userId })),
    );
    fc.assert(
      fc.property(holders, fc.boolean(), event, (before, turnTaken, e) => {
        const after = holdersAfter(before, turnTaken, e);
        const to = nextHoldState(holdState(before, turnTaken), e.type);
        if (to === null) return expect(after).toBeNull();
        expect(after).not.toBeNull();
        expect(after!.assigneeUserId !== null && after!.assigneeAgentBotId !== null).toBe(false);
        // The turn has passed once anything happened to the conversation.
        expect(holdState(after!, true)).toBe(to);
      }),
    );
  });
});

/** In-memory ports of the use cases: one conversation, one bot serving its inbox. */
class World {
  readonly bot: AgentBot = {
    id: 'b0000000-0000-4000-8000-000000000001',
    workspaceId: 'w1',
    name: 'Greeter',
    description: null,
    webhookUrl: 'https://bot.example/hook',
    inboxIds: ['i1'],
    accessTokenHash: 'x',
    accessTokenLast4: 'abcd',
    signingSecret: 's',
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
  conversation: Conversation = {
    ...newConversation({ id: 'c1', workspaceId: 'w1', inboxId: 'i1', contactId: 'k1', status: 'OPEN', lastActivityAt: new Date(1000), createdAt: new Date(1000), updatedAt: new Date(1000) }),
    displayId: 1,
  };
  turns = new Map<string, boolean>();
  events: HelpdeskEvent[] = [];
  now = 2000;
  readonly deps = { clock: { now: () => new Date(this.now) }, ids: { next: () => crypto.randomUUID() } };

  stores(): AgentBotConversationStores {
    const world = this;
    return {
      agentBots: { servingInbox: async (inboxId: string) => (inboxId === 'i1' ? { bot: world.bot, boundAt: new Date(500) } : undefined) },
      botTurns: {
        passed: async (id: string) => world.turns.has(id),
        record: async (turn: { conversationId: string; taken: boolean }) => (world.turns.has(turn.conversationId) ? false : (world.turns.set(turn.conversationId, turn.taken), true)),
      },
      botConversations: {
        lock: async (id: string) => (id === world.conversation.id ? { ...world.conversation } : undefined),
        heldBy: async (botId: string) => (world.conversation.assigneeAgentBotId === botId ? [world.conversation.id] : []),
      },
      conversations: {
        get: async (_w: string, id: string) => (id === world.conversation.id ? { ...world.conversation } : undefined),
        update: async (c: Conversation) => void (world.conversation = { ...c }),
      },
      events: { record: async (e: HelpdeskEvent) => void world.events.push(e) },
      inboxes: { isMember: async () => true },
      plans: { planOf: async () => 'PRO' },
      assigneeStanding: async () => ({ roles: ['AGENT'], inboxMember: true }),
      teamStanding: async () => undefined,
      // Automatic assignment as auto-assignment.ts does it for a conversation nobody holds: the inbox's one member.
      async assignToPeople(id: string) {
        const c = world.conversation;
        if (id !== c.id || c.assigneeUserId !== null || c.assigneeAgentBotId !== null) return;
        world.conversation = { ...c, assigneeUserId: 'rr' };
        world.events.push({ type: 'helpdesk.conversation.assignee_changed', accountId: 'w1', conversationId: id, fromAssigneeUserId: null, toAssigneeUserId: 'rr', actorUserId: null });
      },
    } as unknown as AgentBotConversationStores;
  }
}

const owner = { userId: 'owner', workspaceId: 'w1', roles: ['OWNER' as const] };
const botChanges = (events: HelpdeskEvent[]) => events.filter((e) => e.type === 'helpdesk.conversation.assignee_changed' && ('fromAgentBotId' in e || 'toAgentBotId' in e));

type Real = { world: World };
type Cmd = fc.AsyncCommand<Model, Real>;

/** A helpdesk event of the conversation is handled: the bot's turn (replays included). */
class Turn implements Cmd {
  check = () => true;
  async run(m: Model, r: Real) {
    const before = botChanges(r.world.events).length;
    const outcome = await takeTurn(r.world.stores(), r.world.deps, { conversationId: 'c1', inboxId: 'i1' });
    if (m.turnPassed) expect(outcome).toBeNull();
    else {
      expect(outcome).toBe(m.person === null ? 'taken' : 'declined');
      if (m.person === null) m.bot = true;
      m.turnPassed = true;
    }
    const after = botChanges(r.world.events);
    if (outcome === 'taken') {
      expect(after.length).toBe(before + 1);
      expect(after.at(-1)).toMatchObject({ fromAgentBotId: null, toAgentBotId: r.world.bot.id, fromAssigneeUserId: null, toAssigneeUserId: null, actorUserId: null });
    } else expect(after.length).toBe(before);
  }
  toString = () => 'turn';
}

/** The bot answers through the API: only while it holds the conversation. */
class Reply implements Cmd {
  check = () => true;
  async run(m: Model, r: Real) {
    const answer = await heldConversation(r.world.stores(), r.world.bot, 'c1', 'reply').catch((e: unknown) => e);
    if (m.bot) expect(answer).toMatchObject({ id: 'c1' });
    else expect((answer as DomainError).kind).toBe('not_found');
  }
  toString = () => 'reply';
}

/** The bot hands off: people get it (round-robin assigns one). */
class Handoff implements Cmd {
  check = () => true;
  async run(m: Model, r: Real) {
    const result = await botHandoff(r.world.stores(), r.world.deps, r.world.bot, 'c1').catch((e: unknown) => e);
    if (!m.bot) return expect((result as DomainError).kind).toBe('not_found');
    expect(botChanges(r.world.events).at(-1)).toMatchObject({ fromAgentBotId: r.world.bot.id, toAgentBotId: null, actorUserId: null });
    m.bot = false;
    m.person = 'rr';
    expect(result).toMatchObject({ assigneeAgentBotId: null, assigneeUserId: 'rr' });
  }
  toString = () => 'handoff';
}

/** An agent assigns a person (or unassigns) through the ordinary conversation update. */
class Assign implements Cmd {
  constructor(readonly userId: string | null) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const wasBot = m.bot;
    await updateConversation(r.world.stores(), r.world.deps, owner, 'c1', { assigneeUserId: this.userId });
    if (this.userId !== null) m.bot = false;
    m.person = this.userId;
    if (wasBot && this.userId !== null) {
      expect(botChanges(r.world.events).at(-1)).toMatchObject({ fromAgentBotId: r.world.bot.id, toAgentBotId: null, toAssigneeUserId: this.userId, actorUserId: 'owner' });
    }
  }
  toString = () => `assign(${this.userId})`;
}

/** The bot is unbound from the inbox or deleted: what it holds goes to people. */
class Release implements Cmd {
  check = (m: Readonly<Model>) => m.bot;
  async run(m: Model, r: Real) {
    expect(await handOverHeld(r.world.stores(), r.world.deps, r.world.bot, ['i1'], 'owner')).toBe(1);
    expect(botChanges(r.world.events).at(-1)).toMatchObject({ fromAgentBotId: r.world.bot.id, toAgentBotId: null, actorUserId: 'owner' });
    m.bot = false;
    m.person = 'rr';
  }
  toString = () => 'release';
}

test('model-based: the bot takes once, answers only what it holds, hands over, is taken over; never both a bot and a person', async () => {
  const commands = [
    fc.constant(new Turn()),
    fc.constant(new Reply()),
    fc.constant(new Handoff()),
    fc.constantFrom('u1', 'u2', null).map((u) => new Assign(u)),
    fc.constant(new Release()),
  ];
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { size: '+1' }), async (cmds) => {
      const world = new World();
      const model: Model = { bot: false, person: null, turnPassed: false };
      await fc.asyncModelRun(() => ({ model, real: { world } }), [...cmds].map((c) => wrap(c)));
      function wrap(c: Cmd): Cmd {
        return {
          check: (m) => c.check(m),
          toString: () => c.toString(),
          async run(m, r) {
            await c.run(m, r);
            const conv = r.world.conversation;
            expect({ bot: conv.assigneeAgentBotId === r.world.bot.id, person: conv.assigneeUserId }).toEqual({ bot: m.bot, person: m.person });
            expect(conv.assigneeUserId !== null && conv.assigneeAgentBotId !== null).toBe(false);
            expect(holdState(conv, r.world.turns.has('c1'))).toBe(modelState(m));
            // The bot takes a conversation at most once.
            expect(botChanges(r.world.events).filter((e) => e.toAgentBotId === r.world.bot.id).length).toBeLessThanOrEqual(1);
          },
        };
      }
    }),
    { numRuns: 200 },
  );
});

test('a conversation from before the bot was bound, or resolved before its turn, is not taken', async () => {
  const old = new World();
  old.conversation = { ...old.conversation, createdAt: new Date(100) };
  expect(await takeTurn(old.stores(), old.deps, { conversationId: 'c1', inboxId: 'i1' })).toBeNull();
  expect(old.conversation.assigneeAgentBotId).toBeNull();
  const resolved = new World();
  resolved.conversation = { ...resolved.conversation, status: 'RESOLVED' };
  expect(await takeTurn(resolved.stores(), resolved.deps, { conversationId: 'c1', inboxId: 'i1' })).toBe('declined');
  expect(await takeTurn(resolved.stores(), resolved.deps, { conversationId: 'c1', inboxId: 'i1' })).toBeNull();
  expect(resolved.conversation.assigneeAgentBotId).toBeNull();
});
