import type { ConversationStatus } from './conversation-status.ts';
import type { MessageStatus } from './message-status.ts';
import type { MessageAttachment } from './message-attachments.ts';

/**
 * The conversation and its messages as data (spec 2.11, 2.12): the types every helpdesk module
 * shares, apart from the use cases in conversations.ts (so events and stores need not import them).
 */

/** Spec 2.11. `priority` values beyond `URGENT` (seen in the spec) are ours. */
export const PRIORITIES = ['LOW', 'MEDIUM', 'HIGH', 'URGENT'] as const;
export type Priority = (typeof PRIORITIES)[number];

export interface Conversation {
  id: string;
  workspaceId: string;
  /** Sequential per workspace (spec 2.1); assigned by the store on insert. */
  displayId: number;
  inboxId: string;
  contactId: string;
  status: ConversationStatus;
  snoozedUntil: Date | null;
  priority: Priority | null;
  assigneeUserId: string | null;
  /** An agent bot holding the conversation (issue 7); null when a person or nobody has it. */
  assigneeAgentBotId: string | null;
  teamId: string | null;
  labels: string[];
  customAttributes: Record<string, unknown>;
  aiAgentEnabled: boolean;
  assigneeLastSeenAt: Date | null;
  lastActivityAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** What a new conversation starts as: nobody holds it, no labels, no priority, not snoozed. */
export function newConversation(
  fields: Pick<Conversation, 'id' | 'workspaceId' | 'inboxId' | 'contactId' | 'status' | 'lastActivityAt' | 'createdAt' | 'updatedAt'>,
): Omit<Conversation, 'displayId'> {
  return {
    ...fields,
    snoozedUntil: null,
    priority: null,
    assigneeUserId: null,
    assigneeAgentBotId: null,
    teamId: null,
    labels: [],
    customAttributes: {},
    aiAgentEnabled: false,
    assigneeLastSeenAt: null,
  };
}

export const HELPDESK_MESSAGE_DIRECTIONS = ['incoming', 'outgoing', 'activity'] as const;
export type HelpdeskMessageDirection = (typeof HELPDESK_MESSAGE_DIRECTIONS)[number];

/** A message of a conversation (spec 2.12): from the contact, to the contact (or a private note), or an activity line. */
export interface HelpdeskMessage {
  id: string;
  conversationId: string;
  workspaceId: string;
  direction: HelpdeskMessageDirection;
  private: boolean;
  content: string;
  senderUserId: string | null;
  /** The agent bot that sent it through the bot API (then `senderUserId` is null); null or absent otherwise. */
  senderAgentBotId?: string | null;
  /** The connection message carrying it (incoming messages and replies). */
  chatMessageId: string | null;
  /** Outgoing replies only (spec 3.2); null for incoming, activity and private notes. */
  status: MessageStatus | null;
  externalError: string | null;
  createdAt: Date;
  /** Files on the message with signed download links (filled when the message is shown). */
  attachments?: MessageAttachment[];
}

