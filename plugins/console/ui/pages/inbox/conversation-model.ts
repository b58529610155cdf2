/**
 * The helpdesk's REST shapes as the conversation pane reads them (docs/helpdesk.md), and the
 * small readings of them the pane's parts share.
 */
import type { Role } from '../../../../../core/identity/roles.ts';
import type { Priority } from '../../../../../core/helpdesk/conversations/conversation.ts';

export { PRIORITIES, type Priority } from '../../../../../core/helpdesk/conversations/conversation.ts';

/** Official connections only: the 24-hour window for free text (absent or null elsewhere). */
export interface SendWindow {
  open: boolean;
  closesAt: string | null;
}

export interface Conversation {
  id: string;
  displayId: number;
  inboxId: string;
  contactId: string;
  status: 'OPEN' | 'PENDING' | 'SNOOZED' | 'RESOLVED';
  priority: Priority | null;
  assigneeUserId: string | null;
  assigneeAgentBotId: string | null;
  teamId: string | null;
  snoozedUntil: string | null;
  labels: string[];
  customAttributes: Record<string, unknown>;
  aiAgentEnabled: boolean;
  lastActivityAt: string;
  createdAt: string;
  sendWindow?: SendWindow | null;
}

export interface Attachment {
  id: string;
  fileName: string;
  mimeType: string;
  size: number | null;
  downloadUrl: string;
}

export type MessageStatus = 'PENDING' | 'SENT' | 'DELIVERED' | 'READ' | 'FAILED';

export interface HelpdeskMessage {
  id: string;
  conversationId: string;
  direction: 'incoming' | 'outgoing' | 'activity';
  private: boolean;
  content: string;
  senderUserId: string | null;
  senderAgentBotId: string | null;
  status: MessageStatus | null;
  externalError: string | null;
  attachments: Attachment[];
  createdAt: string;
}

export interface Contact {
  id: string;
  name: string | null;
  phone: string | null;
  email: string | null;
  customAttributes: Record<string, unknown>;
}

/** A workspace member (`GET /v3/members`) or an inbox member (`GET …/inboxes/{id}/members`, no roles). */
export interface Person {
  userId: string;
  name: string;
  email: string;
  roles?: Role[];
}

export interface Team {
  id: string;
  name: string;
  members: Person[];
}

export interface Label {
  id: string;
  name: string;
  color: string | null;
}

export interface Macro {
  id: string;
  name: string;
  visibility: 'personal' | 'workspace';
}

export interface CannedResponse {
  id: string;
  shortCode: string;
  content: string;
}

export interface ContactNote {
  id: string;
  contactId: string;
  content: string;
  authorUserId: string | null;
  createdAt: string;
}

/** What to call a contact: their name, else their phone, else their email. */
export function contactName(contact: Contact | undefined): string {
  return contact?.name || contact?.phone || contact?.email || 'Contact';
}

/** A member's name by id, or a neutral word for someone not listed (gone, or not read yet). */
export function personName(people: Person[] | undefined, userId: string | null): string {
  if (!userId) return 'Nobody';
  return people?.find((p) => p.userId === userId)?.name ?? 'A member';
}
