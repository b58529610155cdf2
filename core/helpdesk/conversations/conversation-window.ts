import { windowClosesAt, windowState, type SendWindow } from '../../messaging/send-window.ts';
import type { ContactStore } from '../contacts/contacts.ts';
import type { InboxStore } from '../inboxes/inboxes.ts';
import type { Conversation } from './conversation.ts';

/**
 * The 24-hour send window of a conversation (spec 3.4), as an agent needs to see it before
 * writing: free text goes out only while it is open, a template always. Null when the inbox is
 * not on a connection that keeps a window (unofficial connections, API inboxes).
 */
export interface ConversationSendWindow {
  open: boolean;
  /** The contact's last message + 24 h (in the past once closed); null when the contact never wrote on this connection. */
  closesAt: Date | null;
}

/** The windows the connections keep, per chat. */
export interface ChatWindows {
  /**
   * The window of the contact's chat on the connection (closed when the contact has no phone:
   * no chat); null when the connection keeps none (unofficial) or is gone.
   */
  chatWindow(workspaceId: string, connectionId: string, phone: string | null): Promise<SendWindow | null>;
}

export interface ConversationWindowStores {
  inboxes: Pick<InboxStore, 'get'>;
  contacts: Pick<ContactStore, 'get'>;
  chatWindows: ChatWindows;
}

export async function conversationSendWindow(stores: ConversationWindowStores, conversation: Conversation, now: Date): Promise<ConversationSendWindow | null> {
  const inbox = await stores.inboxes.get(conversation.workspaceId, conversation.inboxId);
  if (!inbox || inbox.channelType === 'API' || inbox.connectionId === null) return null;
  const contact = await stores.contacts.get(conversation.workspaceId, conversation.contactId);
  const window = await stores.chatWindows.chatWindow(conversation.workspaceId, inbox.connectionId, contact?.phone ?? null);
  if (window === null) return null;
  return { open: windowState(window, now) === 'OPEN', closesAt: windowClosesAt(window) };
}
