import type { IdGen } from '../../shared/ports.ts';
import { newConversation, type Conversation } from './conversation.ts';

/**
 * A contact has at most one unresolved conversation (case) per inbox: whatever brings the
 * contact's messages in, a live message or a history import, joins that case or opens one.
 */

/** The conversation store's side of it. */
export interface ContactCases {
  /** The contact's most recent conversation of the inbox that is not RESOLVED, locked for update. */
  latestUnresolved(inboxId: string, contactId: string): Promise<Conversation | undefined>;
  /** Inserts with the next `displayId` of the workspace (same transaction); answers it. */
  insert(conversation: Omit<Conversation, 'displayId'>): Promise<Conversation>;
}

/** The contact's unresolved conversation of the inbox, or a new one opened as `opening` says (`created`). */
export async function contactCase(
  conversations: ContactCases,
  ids: IdGen,
  inbox: { id: string; workspaceId: string },
  contactId: string,
  opening: Pick<Conversation, 'status' | 'lastActivityAt' | 'createdAt' | 'updatedAt'>,
): Promise<{ conversation: Conversation; created: boolean }> {
  const open = await conversations.latestUnresolved(inbox.id, contactId);
  if (open) return { conversation: open, created: false };
  const conversation = await conversations.insert(newConversation({ id: ids.next(), workspaceId: inbox.workspaceId, inboxId: inbox.id, contactId, ...opening }));
  return { conversation, created: true };
}
