import type { Connection } from '../connections/connection.ts';
import type { Clock } from '../shared/ports.ts';
import type { ChatMessage, ChatStore, MessageStore } from './message.ts';
import type { OutgoingContent } from './outgoing.ts';

/** One message of a bulk send, already checked and paid for (its credit is in `reservationId`). */
export interface PreparedSend {
  id: string;
  remoteJid: string;
  content: OutgoingContent;
  /** Unique per connection: the same send stored twice is refused by the database. */
  idempotencyKey: string;
  reservationId: string;
  sentBy: string | null;
}

/**
 * Stores many outgoing messages PENDING, which queues their driver sends (the message rows are
 * the send queue), in the caller's transaction: a campaign's batch. From here each message
 * follows the path of an API send (the worker's `createSender`): retries, receipts, its credit
 * consumed when the network accepts it and given back when it fails.
 */
export async function queueOutgoingMessages(
  stores: { messages: MessageStore; chats: ChatStore },
  deps: { clock: Clock },
  connection: Pick<Connection, 'id' | 'workspaceId'>,
  sends: PreparedSend[],
): Promise<ChatMessage[]> {
  if (sends.length === 0) return [];
  const now = deps.clock.now();
  const messages = sends.map(
    (send): ChatMessage => ({
      id: send.id,
      workspaceId: connection.workspaceId,
      connectionId: connection.id,
      direction: 'outbound',
      remoteJid: send.remoteJid,
      externalId: null,
      kind: send.content.kind,
      content: send.content,
      status: 'PENDING',
      error: null,
      idempotencyKey: send.idempotencyKey,
      reservationId: send.reservationId,
      replyTo: null,
      sentBy: send.sentBy,
      messageTimestamp: now,
      createdAt: now,
      updatedAt: now,
    }),
  );
  await stores.messages.insertMany(messages);
  await stores.chats.touchOutgoing(connection.id, [...new Set(messages.map((m) => m.remoteJid))], now);
  return messages;
}
