import type { Actor } from '../identity/identity.ts';
import { authorize, can } from '../identity/roles.ts';
import type { DeliveryStatus } from '../messaging/delivery-status.ts';
import { acceptSend, type SendDeps, type SendStores } from '../messaging/send.ts';
import { badRequest, DomainError, unprocessable } from '../shared/errors.ts';
import { getConversation, type ConversationDeps, type ConversationStores, type HelpdeskMessage } from './conversations.ts';
import { applyDeliveryOutcome } from './message-status.ts';
import { assertHelpdeskWritable } from './plan-gate.ts';
import { messageCreated } from './events.ts';

export const DEFAULT_MESSAGE_LIMIT = 20;
export const MAX_MESSAGE_LIMIT = 100;
export const MAX_CONTENT_LENGTH = 4096;

/** What the connection message carrying a reply says about its delivery. */
export interface ChatDelivery {
  status: DeliveryStatus | 'RECEIVED';
  error: { code: number | string; title: string } | null;
}

export interface HelpdeskMessageStores extends ConversationStores {
  /** The delivery state of these connection messages, by id. */
  chatDeliveries(chatMessageIds: string[]): Promise<Map<string, ChatDelivery>>;
}

/**
 * A reply's status follows its connection message (spec 3.2): it is derived when read, by
 * applying the connection message's delivery status as an outcome to the stored `PENDING`
 * through the transition table. Nothing is written back yet: `helpdesk.message.status_changed`
 * (webhooks, realtime) will need the worker to move the stored status on each receipt.
 */
export function withDelivery(message: HelpdeskMessage, delivery: ChatDelivery | undefined): HelpdeskMessage {
  if (message.status === null || !delivery || delivery.status === 'PENDING' || delivery.status === 'RECEIVED') return message;
  const change = applyDeliveryOutcome(
    { status: message.status, externalError: message.externalError },
    { status: delivery.status, externalError: delivery.error ? delivery.error.title : null },
  );
  return { ...message, status: change.status, externalError: change.externalError };
}

async function hydrate(stores: HelpdeskMessageStores, messages: HelpdeskMessage[]): Promise<HelpdeskMessage[]> {
  const ids = messages.filter((m) => m.status !== null && m.chatMessageId !== null).map((m) => m.chatMessageId!);
  if (ids.length === 0) return messages;
  const deliveries = await stores.chatDeliveries(ids);
  return messages.map((m) => (m.chatMessageId ? withDelivery(m, deliveries.get(m.chatMessageId)) : m));
}

/**
 * Spec 4.6: a bare array, oldest first; `cursor` is the id of the oldest message already held and
 * the answer is the `limit` messages just before it; fewer than `limit` means the beginning.
 */
export async function listHelpdeskMessages(
  stores: HelpdeskMessageStores,
  actor: Actor,
  conversationId: string,
  query: { limit?: string; cursor?: string },
): Promise<HelpdeskMessage[]> {
  const conversation = await getConversation(stores, actor, conversationId);
  const problems: string[] = [];
  let limit = DEFAULT_MESSAGE_LIMIT;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (!/^\d+$/.test(query.limit) || limit < 1 || limit > MAX_MESSAGE_LIMIT) problems.push(`limit must be an integer from 1 to ${MAX_MESSAGE_LIMIT}`);
  }
  if (query.cursor !== undefined && !(await stores.messages.get(conversation.id, query.cursor))) problems.push('cursor must be the id of a message of this conversation');
  if (problems.length > 0) throw badRequest(problems);
  return hydrate(stores, await stores.messages.list(conversation.id, limit, query.cursor));
}

/**
 * `POST …/messages`: a private note is stored only; a reply is answered at once with `PENDING`
 * and goes out through `acceptSend` on the inbox's connection (credits, queue, send window),
 * in the caller's transaction. Refused with 422 while `aiAgentEnabled` (spec 2.11).
 */
export async function sendHelpdeskMessage(
  stores: HelpdeskMessageStores,
  send: { stores: SendStores; deps: SendDeps },
  deps: ConversationDeps,
  actor: Actor,
  conversationId: string,
  input: { content: string; private?: boolean },
): Promise<HelpdeskMessage> {
  const conversation = await getConversation(stores, actor, conversationId);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  const content = typeof input.content === 'string' ? input.content.trim() : '';
  if (content.length === 0 || content.length > MAX_CONTENT_LENGTH) throw badRequest(`body.content must be 1 to ${MAX_CONTENT_LENGTH} characters`);
  const isPrivate = input.private === true;
  const now = deps.clock.now();
  const message: HelpdeskMessage = {
    id: deps.ids.next(),
    conversationId: conversation.id,
    workspaceId: conversation.workspaceId,
    direction: 'outgoing',
    private: isPrivate,
    content,
    senderUserId: actor.userId,
    chatMessageId: null,
    status: isPrivate ? null : 'PENDING',
    externalError: null,
    createdAt: now,
  };
  if (!isPrivate) {
    if (conversation.aiAgentEnabled) throw unprocessable('The network\'s AI agent holds this conversation (aiAgentEnabled): nothing is sent while it is on');
    const inbox = await stores.inboxes.get(conversation.workspaceId, conversation.inboxId);
    if (!inbox || inbox.channelType !== 'CONNECTION' || inbox.connectionId === null) {
      throw unprocessable('This inbox has no connection to send on (API-channel replies are not available yet)');
    }
    const contact = await stores.contacts.get(conversation.workspaceId, conversation.contactId);
    if (!contact?.phone) throw unprocessable('The contact has no phone number to reply to');
    try {
      // Spec 2.14 gives Agents no `messages.send` on the connection API, yet answering in their
      // inbox is their job: `helpdesk.work` write was checked above, and the reply goes out on
      // the inbox's connection on the helpdesk's behalf (a sender that may send).
      const sender: Actor = can(actor.roles, 'messages.send', 'write') ? actor : { ...actor, roles: ['MANAGER'] };
      const { message: sent } = await acceptSend(send.stores, send.deps, sender, inbox.connectionId, { to: contact.phone, content: { kind: 'text', text: content } });
      message.chatMessageId = sent.id;
    } catch (error) {
      // The connection's checks answer for the helpdesk: a missing connection is not the caller's 404.
      if (error instanceof DomainError && error.status === 404) throw unprocessable('The inbox\'s connection no longer exists');
      throw error;
    }
  }
  await stores.messages.insert(message);
  const updated = { ...conversation, lastActivityAt: now, updatedAt: now };
  await stores.conversations.update(updated);
  await stores.events.record(messageCreated(updated, message));
  return message;
}
