import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { Conversation, HelpdeskMessage } from '../../core/helpdesk/conversations/conversations.ts';
import type { HelpdeskEvent } from '../../core/helpdesk/events.ts';
import type { MessageStatus } from '../../core/helpdesk/conversations/message-status.ts';
import { deliveryOutcome, externalError, followDeliveries, type ChatDelivery, type ReplyStatusStores } from '../../core/helpdesk/conversations/reply-status.ts';
import { applyReceipt, type DeliveryStatus } from '../../core/messaging/delivery-status.ts';

/**
 * A reply's stored status follows its connection message (core/helpdesk/conversations/reply-status.ts), run by
 * the worker after each delivery event, in whatever order and as often as events are handled.
 *
 * Spec 3.2: "`PENDING` | delivery outcome | asynchronous | `SENT`, `DELIVERED`, `READ` or
 * `FAILED` | Emits `helpdesk.message.status_changed` with `messageId`, `toStatus`,
 * `externalError` (set on `FAILED`)".
 *
 * The model is the connection message's progress and what the helpdesk last showed. Receipts move
 * the connection message through the base's table (late ones ignored); a "follow" (the worker
 * handling some event of the chat: a receipt's, a replayed one, one of another message) must
 * leave the reply showing exactly what the connection message says, and emit one event per
 * visible move, each from the previous shown status to the new one; FAILED carries the
 * provider's explanation and nothing moves after it.
 */

const NOW = new Date(Date.UTC(2025, 6, 1));
const CONVERSATION = { id: 'c1', workspaceId: 'w1', inboxId: 'i1' } as Conversation;

interface Model {
  chat: DeliveryStatus;
  shown: MessageStatus;
  events: number;
}

interface Real {
  chat: ChatDelivery;
  reply: HelpdeskMessage;
  events: HelpdeskEvent[];
}

function stores(r: Real): ReplyStatusStores {
  return {
    // The reply lags when its stored status differs from its connection message's reported one.
    laggingReplies: async () =>
      r.reply.status !== null && ['PENDING', 'SENT', 'DELIVERED'].includes(r.reply.status) && r.chat.status !== 'PENDING' && r.chat.status !== r.reply.status
        ? [{ conversation: CONVERSATION, message: { ...r.reply }, delivery: { ...r.chat } }]
        : [],
    messages: { update: async (m) => void (r.reply = { ...m }) },
    events: { record: async (e) => void r.events.push(e) },
  };
}

class Receipt implements fc.Command<Model, Real> {
  constructor(
    readonly status: Exclude<DeliveryStatus, 'PENDING'>,
    readonly code: number | null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    // The base applies the receipt to the connection message (moves forward only).
    const next = applyReceipt(r.chat.status as DeliveryStatus, this.status);
    if (next !== r.chat.status) r.chat = { status: next, error: next === 'FAILED' ? { code: this.code ?? '', title: 'Provider said no' } : null };
    m.chat = applyReceipt(m.chat, this.status);
    expect(r.chat.status).toBe(m.chat);
  }
  toString = () => `receipt(${this.status})`;
}

class Follow implements fc.Command<Model, Real> {
  check = () => true;
  async run(m: Model, r: Real) {
    const before = r.reply.status;
    const moved = await followDeliveries(stores(r), { connectionId: 'k1', remoteJid: 'j', messageIds: [] });
    const expected: MessageStatus = m.chat === 'PENDING' ? m.shown : m.chat;
    expect(r.reply.status).toBe(expected);
    if (expected !== m.shown) {
      m.events += 1;
      expect(moved).toHaveLength(1);
      expect(r.events.at(-1)).toMatchObject({ type: 'helpdesk.message.status_changed', messageId: r.reply.id, fromStatus: before, toStatus: expected });
    } else expect(moved).toHaveLength(0);
    m.shown = expected;
    expect(r.events).toHaveLength(m.events);
    // externalError exactly on FAILED, with the provider's words and code.
    if (r.reply.status === 'FAILED') expect(r.reply.externalError).toBe(externalError(r.chat.error));
    else expect(r.reply.externalError).toBeNull();
    for (const e of r.events) expect(e.externalError === null).toBe(e.toStatus !== 'FAILED');
  }
  toString = () => 'follow';
}

const commands = [
  fc.tuple(fc.constantFrom<Exclude<DeliveryStatus, 'PENDING'>>('SENT', 'DELIVERED', 'READ', 'FAILED'), fc.option(fc.integer({ min: 1, max: 200_000 }))).map(([s, c]) => new Receipt(s, c)),
  fc.constant(new Follow()),
];

describe('a reply follows its connection message', () => {
  test('any receipts, followed at any points and any number of times: the reply shows the latest delivery, one event per move', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        const reply: HelpdeskMessage = {
          id: 'm1',
          conversationId: 'c1',
          workspaceId: 'w1',
          direction: 'outgoing',
          private: false,
          content: 'hi',
          senderUserId: 'u1',
          chatMessageId: 'x1',
          status: 'PENDING',
          externalError: null,
          createdAt: NOW,
        };
        await fc.asyncModelRun(() => ({ model: { chat: 'PENDING', shown: 'PENDING', events: 0 } as Model, real: { chat: { status: 'PENDING', error: null }, reply, events: [] } as Real }), [...cmds, new Follow()]);
      }),
      { numRuns: 500 },
    );
  });

  test('what a connection message\'s delivery means for a reply', () => {
    expect(deliveryOutcome({ status: 'PENDING', error: null })).toBeNull();
    expect(deliveryOutcome({ status: 'RECEIVED', error: null })).toBeNull();
    expect(deliveryOutcome({ status: 'READ', error: null })).toEqual({ status: 'READ', externalError: null });
    expect(deliveryOutcome({ status: 'FAILED', error: { code: 131047, title: 'Re-engagement message' } })).toEqual({ status: 'FAILED', externalError: 'Re-engagement message (131047)' });
    expect(externalError({ code: '', title: 'No code' })).toBe('No code');
    expect(externalError({ code: 'not_on_network', title: ' ' })).toBe('not_on_network');
    expect(externalError(null)).toBeNull();
  });

  test('a private note or an incoming message (no status) never moves', async () => {
    const note = { id: 'n1', status: null, externalError: null } as HelpdeskMessage;
    const r: Real = { chat: { status: 'READ', error: null }, reply: note, events: [] };
    const s = stores(r);
    s.laggingReplies = async () => [{ conversation: CONVERSATION, message: note, delivery: { status: 'READ', error: null } }];
    expect(await followDeliveries(s, { connectionId: 'k1', remoteJid: null, messageIds: [] })).toEqual([]);
    expect(r.events).toHaveLength(0);
  });
});
