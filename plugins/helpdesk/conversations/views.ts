import { t } from 'elysia';
import { CONVERSATION_STATUSES } from '../../../core/helpdesk/conversations/conversation-status.ts';
import { HELPDESK_MESSAGE_DIRECTIONS, PRIORITIES, type Conversation, type HelpdeskMessage } from '../../../core/helpdesk/conversations/conversations.ts';
import { MESSAGE_STATUSES } from '../../../core/helpdesk/conversations/message-status.ts';
import type { ConversationSendWindow } from '../../../core/helpdesk/conversations/conversation-window.ts';
import { iso, Timestamp, Uuid } from '../../kernel/http.ts';

export const SendWindowView = t.Nullable(
  t.Object({
    open: t.Boolean({ description: 'Free text may go out (the contact wrote in the last 24 hours); when false only a template may' }),
    closesAt: t.Nullable(Timestamp, { description: "The contact's last message + 24 h (past once closed); null when the contact never wrote" }),
  }),
  { description: 'The 24-hour send window of an official (cloud-api) connection (spec 3.4); null when the inbox is not on one' },
);

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
  sendWindow: t.Optional(SendWindowView),
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

/** A conversation on its own (GET, PATCH, POST about one conversation): with its `sendWindow`. Lists, events and the other surfaces leave the window out: it costs reads. */
export function presentWithWindow(c: Conversation, sendWindow: ConversationSendWindow | null) {
  return { ...present(c), sendWindow: sendWindow && { open: sendWindow.open, closesAt: iso(sendWindow.closesAt) } };
}

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
