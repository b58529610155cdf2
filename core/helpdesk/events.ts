import type { ConversationStatus } from './conversations/conversation-status.ts';
import type { Conversation, HelpdeskMessage } from './conversations/conversation.ts';
import type { MessageStatus } from './conversations/message-status.ts';
import type { InboxSync } from './inboxes/inbox-sync-status.ts';

/** The twenty-one helpdesk event types (spec 6.5), all deliverable to helpdesk webhooks. */
export const HELPDESK_EVENT_TYPES = [
  'helpdesk.conversation.created',
  'helpdesk.conversation.updated',
  'helpdesk.conversation.status_changed',
  'helpdesk.conversation.assignee_changed',
  'helpdesk.conversation.priority_changed',
  'helpdesk.conversation.labels_changed',
  'helpdesk.conversation.deleted',
  'helpdesk.conversation.read',
  'helpdesk.conversation.ai_agent_changed',
  'helpdesk.message.created',
  'helpdesk.message.updated',
  'helpdesk.message.deleted',
  'helpdesk.message.status_changed',
  'helpdesk.mention.created',
  'helpdesk.label.created',
  'helpdesk.label.updated',
  'helpdesk.label.deleted',
  'helpdesk.csat.response_received',
  'helpdesk.sla.missed',
  'helpdesk.contact_sync.updated',
  'helpdesk.conversation_sync.updated',
] as const;
export type HelpdeskEventType = (typeof HELPDESK_EVENT_TYPES)[number];

export function isHelpdeskEventType(value: string): value is HelpdeskEventType {
  return (HELPDESK_EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * An event object (spec 6.5): `type` repeats the event type, `accountId` is the workspace; the
 * other fields are those of the spec's table. Events about a conversation always carry
 * `conversationId` and `inboxId` (they decide who hears of it: inbox rooms, inbox-bound
 * webhooks). A `message` is the domain message; the adapter hydrates it into the REST shape.
 */
export interface HelpdeskEvent {
  type: HelpdeskEventType;
  accountId: string;
  conversationId?: string;
  inboxId?: string;
  message?: HelpdeskMessage;
  [field: string]: unknown;
}

/** Where the use cases record what happened, in their own transaction (the outbox does the rest). */
export interface HelpdeskEventLog {
  record(event: HelpdeskEvent): Promise<void>;
}

const about = (c: Conversation) => ({ accountId: c.workspaceId, conversationId: c.id, inboxId: c.inboxId });

export function conversationCreated(c: Conversation): HelpdeskEvent {
  return {
    type: 'helpdesk.conversation.created',
    ...about(c),
    displayId: c.displayId,
    contactId: c.contactId,
    status: c.status,
    priority: c.priority,
    assigneeUserId: c.assigneeUserId,
    teamId: c.teamId,
  };
}

/** `silent` only on automatic changes (a snooze expiring), which leave no activity message. */
export function statusChanged(c: Conversation, fromStatus: ConversationStatus, actorUserId: string | null, silent = false): HelpdeskEvent {
  return { type: 'helpdesk.conversation.status_changed', ...about(c), fromStatus, toStatus: c.status, actorUserId, ...(silent && { silent: true }) };
}

export function assigneeChanged(before: Conversation, after: Conversation, actorUserId: string | null): HelpdeskEvent {
  return {
    type: 'helpdesk.conversation.assignee_changed',
    ...about(after),
    fromAssigneeUserId: before.assigneeUserId,
    toAssigneeUserId: after.assigneeUserId,
    fromTeamId: before.teamId,
    toTeamId: after.teamId,
    actorUserId,
    // Spec 6.5: "with a bot also `fromAgentBotId`, `toAgentBotId`".
    ...((before.assigneeAgentBotId !== null || after.assigneeAgentBotId !== null) && { fromAgentBotId: before.assigneeAgentBotId, toAgentBotId: after.assigneeAgentBotId }),
  };
}

export function priorityChanged(before: Conversation, after: Conversation, actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.conversation.priority_changed', ...about(after), fromPriority: before.priority, toPriority: after.priority, actorUserId };
}

/** The delta, not the final list (spec 6.5): applying it to the old set gives the new one. */
export function labelsChanged(c: Conversation, delta: { addedLabelIds: string[]; removedLabelIds: string[] }, actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.conversation.labels_changed', ...about(c), addedLabelIds: delta.addedLabelIds, removedLabelIds: delta.removedLabelIds, actorUserId };
}

/** Changes of fields with no event of their own (custom attributes, for instance). */
export function conversationUpdated(c: Conversation, changedFields: string[], actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.conversation.updated', ...about(c), changedFields, actorUserId };
}

export function conversationRead(c: Conversation, userId: string): HelpdeskEvent {
  return { type: 'helpdesk.conversation.read', ...about(c), userId, assigneeLastSeenAt: c.assigneeLastSeenAt };
}

export function aiAgentChanged(c: Conversation, actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.conversation.ai_agent_changed', ...about(c), aiAgentEnabled: c.aiAgentEnabled, actorUserId };
}

export function conversationDeleted(c: Conversation, actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.conversation.deleted', ...about(c), displayId: c.displayId, contactId: c.contactId, actorUserId };
}

export function messageCreated(c: Conversation, message: HelpdeskMessage): HelpdeskEvent {
  return { type: 'helpdesk.message.created', ...about(c), message };
}

export function messageUpdated(c: Conversation, message: HelpdeskMessage, changedFields: string[], actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.message.updated', ...about(c), messageId: message.id, message, changedFields, actorUserId };
}

export function messageDeleted(c: Conversation, message: HelpdeskMessage, actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.message.deleted', ...about(c), messageId: message.id, actorUserId };
}

export function messageStatusChanged(c: Conversation, message: HelpdeskMessage, fromStatus: MessageStatus | null): HelpdeskEvent {
  return { type: 'helpdesk.message.status_changed', ...about(c), messageId: message.id, fromStatus, toStatus: message.status, externalError: message.externalError };
}

/**
 * A member was @mentioned in a private note (payload ours; core/helpdesk/notifications/mentions.ts): one event
 * per mentioned member; `actorUserId` wrote the note. Sockets hear it in `mentionedUserId`'s room only.
 */
export function mentionCreated(
  c: Conversation,
  mention: { messageId: string; mentionedUserId: string; actorUserId: string | null; createdAt: Date },
): HelpdeskEvent {
  return {
    type: 'helpdesk.mention.created',
    ...about(c),
    messageId: mention.messageId,
    mentionedUserId: mention.mentionedUserId,
    actorUserId: mention.actorUserId,
    createdAt: mention.createdAt,
  };
}

/** Label events (payloads ours): the label as REST shows it (labels-catalogue.ts), and who acted. */
interface Label {
  id: string;
  workspaceId: string;
  name: string;
  color: string | null;
  description: string | null;
}
const labelFields = (l: Label) => ({ accountId: l.workspaceId, labelId: l.id, name: l.name, color: l.color, description: l.description });

export function labelCreated(l: Label, actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.label.created', ...labelFields(l), actorUserId };
}

/** `previousName` is set when the label was renamed (every conversation wearing it was renamed too). */
export function labelUpdated(l: Label, changedFields: string[], previousName: string | null, actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.label.updated', ...labelFields(l), changedFields, previousName, actorUserId };
}

/** The label was taken off every conversation and deleted. */
export function labelDeleted(l: Label, actorUserId: string | null): HelpdeskEvent {
  return { type: 'helpdesk.label.deleted', accountId: l.workspaceId, labelId: l.id, name: l.name, actorUserId };
}

/**
 * History sync events (payloads ours; core/helpdesk/inboxes/inbox-sync.ts): recorded when a sync starts,
 * after each page of chats and when it ends. Each carries the counts of its own kind of record
 * (`total`, `processed`, `created`); `error` is set exactly when `status` is FAILED. They stand in
 * for the per-conversation and per-message events an import of history does not record.
 */
const syncFields = (s: InboxSync) => ({ accountId: s.workspaceId, inboxId: s.inboxId, syncId: s.id, status: s.status });
const syncTimes = (s: InboxSync) => ({ startedAt: s.startedAt, finishedAt: s.finishedAt, error: s.error });

export function contactSyncUpdated(s: InboxSync): HelpdeskEvent {
  return { type: 'helpdesk.contact_sync.updated', ...syncFields(s), ...s.contacts, ...syncTimes(s) };
}

/** Also `messagesImported`: the helpdesk messages the sync brought in so far. */
export function conversationSyncUpdated(s: InboxSync): HelpdeskEvent {
  return { type: 'helpdesk.conversation_sync.updated', ...syncFields(s), ...s.conversations, messagesImported: s.messagesImported, ...syncTimes(s) };
}

/**
 * A contact answered the satisfaction survey of a conversation (payload ours; core/helpdesk/csat/csat.ts):
 * the rating (1 to 5), the comment (null when none) and who held the conversation when it was
 * resolved. An inbox event: it reaches inbox-bound webhooks and the inbox's rooms.
 */
export function csatResponseReceived(r: {
  workspaceId: string;
  conversationId: string;
  inboxId: string;
  rating: number;
  comment: string | null;
  assigneeUserId: string | null;
  submittedAt: Date;
}): HelpdeskEvent {
  return {
    type: 'helpdesk.csat.response_received',
    accountId: r.workspaceId,
    conversationId: r.conversationId,
    inboxId: r.inboxId,
    rating: r.rating,
    comment: r.comment,
    assigneeUserId: r.assigneeUserId,
    submittedAt: r.submittedAt,
  };
}

/**
 * An SLA target of a conversation was missed (payload ours; core/helpdesk/sla/tracking.ts): which
 * target (`first_response`, `next_response`, `resolution`) of which policy, when it was due and
 * when the service found it missed. Sent to helpdesk webhooks only: spec 6.7, "`helpdesk.sla.missed`
 * is not broadcast" (realtime/broadcast.ts gives it no room).
 */
export function slaMissed(b: {
  workspaceId: string;
  conversationId: string;
  inboxId: string;
  policyId: string | null;
  target: string;
  dueAt: Date;
  breachedAt: Date;
}): HelpdeskEvent {
  return {
    type: 'helpdesk.sla.missed',
    accountId: b.workspaceId,
    conversationId: b.conversationId,
    inboxId: b.inboxId,
    slaPolicyId: b.policyId,
    target: b.target,
    dueAt: b.dueAt,
    breachedAt: b.breachedAt,
  };
}
