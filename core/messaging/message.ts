import type { Page, PageRequest } from '../shared/pagination.ts';
import type { DeliveryStatus } from './delivery-status.ts';

/** A message on a connection, either way. Inbound content is the 2.13 data; outbound, the request. */
export interface ChatMessage {
  id: string;
  workspaceId: string;
  connectionId: string;
  direction: 'inbound' | 'outbound';
  remoteJid: string;
  externalId: string | null;
  /** Outbound: the kind sent (`text`, `image`…). Inbound: the 2.13 `messageType`. */
  kind: string;
  content: unknown;
  /** Outbound: a DeliveryStatus. Inbound: `RECEIVED`. */
  status: DeliveryStatus | 'RECEIVED';
  error: { code: number | string; title: string } | null;
  idempotencyKey: string | null;
  reservationId: string | null;
  replyTo: string | null;
  sentBy: string | null;
  messageTimestamp: Date;
  createdAt: Date;
  updatedAt: Date;
}

export interface Chat {
  connectionId: string;
  remoteJid: string;
  name: string | null;
  lastMessageAt: Date;
  lastContactMessageAt: Date | null;
}

/** A message's id on the network, unique per connection. */
export interface NetworkId {
  connectionId: string;
  externalId: string;
}

export interface MessageStore {
  /** Inserts unless a message with the same external id exists on the connection; true when inserted. */
  insert(message: ChatMessage): Promise<boolean>;
  /**
   * Inserts messages from the network in one write, skipping those whose network id the
   * connection already has (a replay); the network ids inserted.
   */
  insertReceived(messages: readonly ChatMessage[]): Promise<string[]>;
  /** Inserts new outgoing messages (no network id yet) in one write. */
  insertMany(messages: ChatMessage[]): Promise<void>;
  get(id: string): Promise<ChatMessage | undefined>;
  /** The messages of these ids that exist (ids that are not ours are skipped). */
  getMany(ids: readonly string[]): Promise<ChatMessage[]>;
  lock(id: string): Promise<ChatMessage | undefined>;
  /** Row-locked reads of several messages, taken in id order (concurrent callers never deadlock). */
  lockMany(ids: readonly string[]): Promise<ChatMessage[]>;
  findByExternalId(connectionId: string, externalId: string): Promise<ChatMessage | undefined>;
  findByIdempotencyKey(connectionId: string, key: string): Promise<ChatMessage | undefined>;
  update(message: ChatMessage): Promise<void>;
  /** Stores the network ids, statuses and errors of sent messages (a batch of driver sends). */
  recordSent(messages: readonly ChatMessage[]): Promise<void>;
  /**
   * Serialises the work on one network id until the transaction ends: storing a sent message's
   * id and taking its held receipts on one side, a receipt looking for the message on the other.
   */
  lockNetworkId(connectionId: string, externalId: string): Promise<void>;
  /** `lockNetworkId` for several network ids, taken in one order. */
  lockNetworkIds(ids: readonly NetworkId[]): Promise<void>;
  /** Keeps a receipt whose message has no network id yet (the provider answered faster than we stored). */
  holdReceipt(connectionId: string, externalId: string, receipt: { status: DeliveryStatus; error: { code: number | string; title: string } | null }): Promise<void>;
  /** The held receipts of these network ids, removed as they are handed over. */
  takeHeldReceipts(ids: readonly NetworkId[]): Promise<Array<NetworkId & { status: DeliveryStatus; error: { code: number | string; title: string } | null }>>;
  /** A chat's messages, newest first before `cursor` (a message id), `limit` of them. */
  history(connectionId: string, remoteJid: string, options: { limit: number; before?: ChatMessage }): Promise<ChatMessage[]>;
}

/** Activity in one chat: its latest message, and its latest from the contact (and the name they gave). */
export interface ChatTouch {
  remoteJid: string;
  at: Date;
  /** The latest contact message; absent when every message was the account's own. */
  contactAt?: Date;
  name?: string;
}

export interface ChatStore {
  get(connectionId: string, remoteJid: string): Promise<Chat | undefined>;
  /** Records activity in a chat, creating it on first contact. */
  touch(connectionId: string, remoteJid: string, update: { at: Date; name?: string; fromContact: boolean }): Promise<void>;
  /** `touch` for several chats (distinct) in one write. */
  touchMany(connectionId: string, touches: readonly ChatTouch[]): Promise<void>;
  /** Records one outgoing message in each of these chats (distinct), creating those that are new. */
  touchOutgoing(connectionId: string, remoteJids: string[], at: Date): Promise<void>;
  list(connectionId: string, request: PageRequest): Promise<Page<Chat>>;
}
