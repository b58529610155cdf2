import { t } from 'elysia';
import { CONVERSATION_STATUSES } from '../../../core/helpdesk/conversations/conversation-status.ts';
import { HELPDESK_MESSAGE_DIRECTIONS, PRIORITIES, type Conversation, type HelpdeskMessage } from '../../../core/helpdesk/conversations/conversations.ts';
import { MESSAGE_STATUSES } from '../../../core/helpdesk/conversations/message-status.ts';
import { iso, Timestamp, Uuid } from '../../kernel/http.ts';

/** The REST shapes of conversations and helpdesk messages; events carry the same (spec 2.12). */
export const ConversationView = t.Object({
  id: Uuid,
  displayId: t.Integer({ description: 'Sequential per workspace; shown to people, never a path parameter' }),
  inboxId: Uuid,
  contactId: Uuid,
  status: t.UnionEnum([...CONVERSATION_STATUSES]),
  priority: t.Nullable(t.UnionEnum([...PRIORITIES])),
  assigneeUserId: t.Nullable(Uuid),
  assigneeAgentBotId: t.Nullable(Uuid),
  teamId: t.Nullable(Uuid),
  snoozedUntil: t.Nullable(Timestamp),
  labels: t.Array(t.String()),
  customAttributes: t.Record(t.String(), t.Unknown()),
  assigneeLastSeenAt: t.Nullable(Timestamp),
  aiAgentEnabled: t.Boolean({ description: 'While true nothing sent by the customer goes out on this conversation (the network\'s own AI holds the chat)' }),
  lastActivityAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const AttachmentView = t.Object({
  id: Uuid,
  fileName: t.String(),
  mimeType: t.String(),
  size: t.Nullable(t.Integer({ description: 'Bytes; null while unknown (received media not fetched from the network yet)' })),
  downloadUrl: t.String({ description: 'Signed link valid 7 days; streams the bytes without an API key' }),
});

export const HelpdeskMessageView = t.Object({
  id: Uuid,
  conversationId: Uuid,
  direction: t.UnionEnum([...HELPDESK_MESSAGE_DIRECTIONS], { description: 'incoming: from the contact; outgoing: a reply or a private note; activity: a line about the conversation' }),
  private: t.Boolean({ description: 'A note for agents only; never sent' }),
  content: t.String(),
  senderUserId: t.Nullable(Uuid),
  senderAgentBotId: t.Nullable(Uuid, { description: 'The agent bot that sent it (senderUserId is then null)' }),
  status: t.Nullable(t.UnionEnum([...MESSAGE_STATUSES], { description: 'Replies only: PENDING at once, then SENT, DELIVERED, READ or FAILED' })),
  externalError: t.Nullable(t.String({ description: 'Set when FAILED' })),
  attachments: t.Array(AttachmentView, { description: 'Files on the message (empty when none)' }),
  createdAt: Timestamp,
});

export function present(c: Conversation) {
  return {
    id: c.id,
    displayId: c.displayId,
    inboxId: c.inboxId,
    contactId: c.contactId,
    status: c.status,
    priority: c.priority,
    assigneeUserId: c.assigneeUserId,
    assigneeAgentBotId: c.assigneeAgentBotId,
    teamId: c.teamId,
    snoozedUntil: iso(c.snoozedUntil),
    labels: c.labels,
    customAttributes: c.customAttributes,
    assigneeLastSeenAt: iso(c.assigneeLastSeenAt),
    aiAgentEnabled: c.aiAgentEnabled,
    lastActivityAt: iso(c.lastActivityAt),
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
  };
}

export function presentMessage(m: HelpdeskMessage) {
  return {
    id: m.id,
    conversationId: m.conversationId,
    direction: m.direction,
    private: m.private,
    content: m.content,
    senderUserId: m.senderUserId,
    senderAgentBotId: m.senderAgentBotId ?? null,
    status: m.status,
    externalError: m.externalError,
    attachments: m.attachments ?? [],
    createdAt: iso(m.createdAt),
  };
}
