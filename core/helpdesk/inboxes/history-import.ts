import { contactCase } from '../conversations/contact-case.ts';
import type { DeliveryStatus } from '../../messaging/delivery-status.ts';
import type { Clock, IdGen, Random } from '../../shared/ports.ts';
import type { ConversationStatus } from '../conversations/conversation-status.ts';
import type { Contact, ContactStore } from '../contacts/contacts.ts';
import type { ConversationStore, HelpdeskMessage, HelpdeskMessageStore } from '../conversations/conversations.ts';
import type { Inbox } from './inboxes.ts';
import { applyDeliveryOutcome, type MessageStatus } from '../conversations/message-status.ts';
import { deliveryOutcome } from '../conversations/reply-status.ts';

/**
 * One chat of a connection brought into an inbox (the work of a history sync, inbox-sync.ts).
 *
 * - The contact is found by phone (E.164, `+<digits>` of the chat id) or created with the
 *   chat's name.
 * - The chat's latest `HISTORY_PER_CHAT` messages, oldest first, that no helpdesk message
 *   carries yet (the live subscriber may have taken some: `chatMessageId` is unique) join the
 *   contact's latest unresolved conversation of the inbox, or a new one.
 * - A new conversation of history is OPEN when the chat's last message came from the contact
 *   less than 24 hours ago (it is waiting for an answer), RESOLVED otherwise (history only).
 *   An existing conversation keeps its status: old messages do not reopen anything.
 * - Messages keep their time (`createdAt` is the message's time) and their place: their ids are
 *   UUID v7 of that time, so the conversation's id order (how messages are listed) stays
 *   chronological among the live ones. Incoming ones carry no status; outgoing ones carry their
 *   connection message's delivery through message-status.ts (not yet sent: PENDING), and the
 *   reply-status follower moves them on like any reply.
 * - No conversation or message event is recorded (a history would flood webhooks); the sync's
 *   own events summarise it.
 */

/** How many of a chat's latest messages a sync brings in. */
export const HISTORY_PER_CHAT = 100;
/** A chat whose contact wrote last within this is waiting for an answer (the network's window). */
export const WAITING_WINDOW_MS = 24 * 60 * 60_000;

/** A one-to-one chat of the connection. */
export interface HistoryChat {
  remoteJid: string;
  name: string | null;
}

/** A connection message of a chat, as the helpdesk imports it (its words already read by the adapter). */
export interface HistoryMessage {
  id: string;
  direction: 'inbound' | 'outbound';
  text: string;
  status: DeliveryStatus | 'RECEIVED';
  error: { code: number | string; title: string } | null;
  /** The member who sent it through the API, when they are still a user. */
  sentBy: string | null;
  at: Date;
  /** A helpdesk message carries it already. */
  imported: boolean;
}

export interface HistoryImportStores {
  contacts: Pick<ContactStore, 'findByPhone' | 'insert'>;
  conversations: Pick<ConversationStore, 'latestUnresolved' | 'insert' | 'update'>;
  messages: Pick<HelpdeskMessageStore, 'insert'>;
  history: {
    /** The chat's latest `limit` messages, oldest first. */
    messages(connectionId: string, remoteJid: string, limit: number): Promise<HistoryMessage[]>;
  };
}

export interface HistoryImportDeps {
  clock: Clock;
  ids: IdGen;
  random: Random;
}

export interface ChatImport {
  contactCreated: boolean;
  conversationCreated: boolean;
  messagesImported: number;
}

/** The digits of a one-to-one chat id (`<digits>@s.whatsapp.net`), as the live subscriber reads them; null for any other chat. */
export function chatPhoneDigits(remoteJid: string): string | null {
  return /^(\d{6,15})@s\.whatsapp\.net$/.exec(remoteJid)?.[1] ?? null;
}

/** The status of a new conversation of history, from the chat's last message (see above). */
export function historyStatus(last: Pick<HistoryMessage, 'direction' | 'at'> | undefined, now: Date): ConversationStatus {
  return last?.direction === 'inbound' && now.getTime() - last.at.getTime() < WAITING_WINDOW_MS ? 'OPEN' : 'RESOLVED';
}

/** An outgoing message's status from its connection message's delivery (RECEIVED or PENDING: PENDING). */
export function importedDelivery(m: Pick<HistoryMessage, 'status' | 'error'>): { status: MessageStatus; externalError: string | null } {
  const outcome = deliveryOutcome({ status: m.status, error: m.error });
  if (!outcome) return { status: 'PENDING', externalError: null };
  const change = applyDeliveryOutcome({ status: 'PENDING', externalError: null }, outcome);
  return { status: change.status, externalError: change.externalError };
}

/**
 * A UUID v7 of a past time (RFC 9562): 48 bits of milliseconds, then `sequence` in the 12 bits
 * after the version (messages of one millisecond keep their order), then random bits.
 */
export function uuidV7At(at: Date, sequence: number, random: Random): string {
  const bytes = random.bytes(16);
  let ms = Math.max(0, Math.floor(at.getTime()));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Brings one chat into the inbox, in the caller's transaction (which holds the contact's lock).
 * Idempotent: a second run finds every message imported and changes nothing.
 */
export async function importChat(stores: HistoryImportStores, deps: HistoryImportDeps, inbox: Inbox & { connectionId: string }, chat: HistoryChat): Promise<ChatImport> {
  const result: ChatImport = { contactCreated: false, conversationCreated: false, messagesImported: 0 };
  const digits = chatPhoneDigits(chat.remoteJid);
  if (digits === null) return result;
  const now = deps.clock.now();
  let contact: Contact | undefined = await stores.contacts.findByPhone(inbox.workspaceId, `+${digits}`);
  if (!contact) {
    contact = { id: deps.ids.next(), workspaceId: inbox.workspaceId, name: chat.name?.trim() || null, phone: `+${digits}`, email: null, customAttributes: {}, createdAt: now, updatedAt: now };
    await stores.contacts.insert(contact);
    result.contactCreated = true;
  }
  const history = await stores.history.messages(inbox.connectionId, chat.remoteJid, HISTORY_PER_CHAT);
  const fresh = history.filter((m) => !m.imported);
  if (fresh.length === 0) return result;

  const lastAt = fresh.at(-1)!.at;
  const { conversation, created } = await contactCase(stores.conversations, deps.ids, inbox, contact.id, {
    status: historyStatus(history.at(-1), now),
    lastActivityAt: lastAt,
    // It began with its first message.
    createdAt: fresh[0]!.at,
    updatedAt: now,
  });
  result.conversationCreated = created;
  for (const [sequence, m] of fresh.entries()) {
    const outgoing = m.direction === 'outbound';
    const delivery = outgoing ? importedDelivery(m) : { status: null, externalError: null };
    const message: HelpdeskMessage = {
      id: uuidV7At(m.at, sequence, deps.random),
      conversationId: conversation.id,
      workspaceId: inbox.workspaceId,
      direction: outgoing ? 'outgoing' : 'incoming',
      private: false,
      content: m.text,
      senderUserId: outgoing ? m.sentBy : null,
      chatMessageId: m.id,
      status: delivery.status,
      externalError: delivery.externalError,
      createdAt: m.at,
    };
    // False when a helpdesk message took it meanwhile (it cannot here, under the contact's lock, but the key decides).
    if (await stores.messages.insert(message)) result.messagesImported += 1;
  }
  if (!result.conversationCreated && lastAt > conversation.lastActivityAt) {
    await stores.conversations.update({ ...conversation, lastActivityAt: lastAt, updatedAt: now });
  }
  return result;
}
