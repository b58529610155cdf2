import type { DeliveryStatus } from '../../messaging/delivery-status.ts';
import type { Conversation, HelpdeskMessage } from './conversations.ts';
import { messageStatusChanged, type HelpdeskEventLog } from '../events.ts';
import { applyDeliveryOutcome, type DeliveryOutcome } from './message-status.ts';

/**
 * A reply's stored status follows the connection message that carries it (spec 3.2: "`PENDING` |
 * delivery outcome | asynchronous | `SENT`, `DELIVERED`, `READ` or `FAILED` | Emits
 * `helpdesk.message.status_changed`").
 *
 * The worker runs this when the base publishes a change of a connection message's delivery on a
 * chat: `send.message` (an unofficial connection handed it to the network), `messages.update` (a
 * receipt, or the send failing for good). Those events carry the provider's own data, whose
 * shape differs by driver, so the reply is not looked up from the event: every reply of that
 * chat whose stored status lags behind its connection message is brought forward. That is
 * idempotent (a replayed event finds nothing lagging), indifferent to the order events are
 * handled in, and a late event can only move a reply forward (the table of message-status.ts).
 * When several receipts land before the worker looks (SENT then READ), the reply moves once, to
 * the latest status; each move records one event.
 */

/** What the connection message carrying a reply says now. */
export interface ChatDelivery {
  status: DeliveryStatus | 'RECEIVED';
  /** The provider's error, set when FAILED. */
  error: { code: number | string; title: string } | null;
}

/** A reply (with its conversation) and its connection message's delivery, locked until the transaction ends. */
export interface LaggingReply {
  conversation: Conversation;
  message: HelpdeskMessage;
  delivery: ChatDelivery;
}

/**
 * Where a delivery changed: a connection and the chat the event names, plus any message ids the
 * provider's data names (network ids, or the service's own id on a send failure) in case the
 * provider spells the chat differently from the stored message (a Baileys LID, say).
 */
export interface DeliveryScope {
  connectionId: string;
  remoteJid: string | null;
  messageIds: string[];
}

export interface ReplyStatusStores {
  /**
   * Replies carried by connection messages in scope whose delivery status differs from the
   * reply's stored status (replies still PENDING, SENT or DELIVERED), each locked, oldest first.
   */
  laggingReplies(scope: DeliveryScope): Promise<LaggingReply[]>;
  messages: { update(message: HelpdeskMessage): Promise<void> };
  events: HelpdeskEventLog;
}

/** The outcome a connection message's delivery means for the reply; none while it is still pending. */
export function deliveryOutcome(delivery: ChatDelivery): DeliveryOutcome | null {
  if (delivery.status === 'PENDING' || delivery.status === 'RECEIVED') return null;
  return { status: delivery.status, externalError: delivery.status === 'FAILED' ? externalError(delivery.error) : null };
}

/** `externalError` of a FAILED reply: the provider's explanation, with its code when it has one. */
export function externalError(error: ChatDelivery['error']): string | null {
  if (!error) return null;
  const title = typeof error.title === 'string' ? error.title.trim() : '';
  const code = error.code === undefined || error.code === null || error.code === '' ? '' : String(error.code);
  if (title && code) return `${title} (${code})`;
  return title || code || null;
}

/** Moves one reply through the transition table; answers the stored message when it changed. */
export async function followDelivery(stores: Pick<ReplyStatusStores, 'messages' | 'events'>, reply: LaggingReply): Promise<HelpdeskMessage | null> {
  const { message, delivery, conversation } = reply;
  const outcome = deliveryOutcome(delivery);
  if (message.status === null || outcome === null) return null;
  const change = applyDeliveryOutcome({ status: message.status, externalError: message.externalError }, outcome);
  if (!change.changed) return null;
  const updated: HelpdeskMessage = { ...message, status: change.status, externalError: change.externalError };
  await stores.messages.update(updated);
  await stores.events.record(messageStatusChanged(conversation, updated, message.status));
  return updated;
}

/** Brings every lagging reply in scope up to its connection message (the caller's transaction). */
export async function followDeliveries(stores: ReplyStatusStores, scope: DeliveryScope): Promise<HelpdeskMessage[]> {
  const moved: HelpdeskMessage[] = [];
  for (const reply of await stores.laggingReplies(scope)) {
    const updated = await followDelivery(stores, reply);
    if (updated) moved.push(updated);
  }
  return moved;
}
