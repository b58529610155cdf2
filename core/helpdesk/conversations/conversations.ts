import type { Actor } from '../../identity/identity.ts';
import { authorize, type Role } from '../../identity/roles.ts';
import { badRequest, notFound } from '../../shared/errors.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import { applyConversationEvent, conversationActivityText, CONVERSATION_STATUSES, type ConversationEvent, type ConversationStatus } from './conversation-status.ts';
import type { Contact, ContactStore } from '../contacts/contacts.ts';
import { seesEveryInbox, type Inbox, type InboxStore } from '../inboxes/inboxes.ts';
import { labelDelta, labelKey, normaliseLabels } from '../labels/label-sets.ts';
import {
  aiAgentChanged,
  assigneeChanged,
  conversationCreated,
  conversationRead,
  conversationUpdated,
  labelsChanged,
  messageCreated,
  priorityChanged,
  statusChanged,
  type HelpdeskEventLog,
} from '../events.ts';
import type { MessageStatus } from './message-status.ts';
import { attachIncoming, type AttachmentStore, type IncomingAttachment, type MessageAttachment } from './message-attachments.ts';
import { resolveLabels, type LabelStore } from '../labels/labels-catalogue.ts';
import { assertHelpdeskWritable, type WorkspacePlans } from '../plan-gate.ts';
import { scheduleSnoozeExpiry, type SnoozeScheduler } from './snooze-schedule.ts';
import { teamAssignment, type TeamStanding } from '../teams/team-assignment.ts';

export { HELPDESK_MESSAGE_DIRECTIONS, PRIORITIES, type Conversation, type HelpdeskMessage, type HelpdeskMessageDirection, type Priority } from './conversation.ts';
import { contactCase, type ContactCases } from './contact-case.ts';
import { PRIORITIES, type Conversation, type HelpdeskMessage, type Priority } from './conversation.ts';

/** `insert` and `latestUnresolved` as contact-case.ts describes them. */
export interface ConversationStore extends ContactCases {
  get(workspaceId: string, id: string): Promise<Conversation | undefined>;
  update(conversation: Conversation): Promise<void>;
  /** Deletes the conversation with its messages and their attachments. */
  delete(id: string): Promise<void>;
}

export interface HelpdeskMessageStore {
  /** False when a helpdesk message already carries `chatMessageId` (a replayed event). */
  insert(message: HelpdeskMessage): Promise<boolean>;
  /** Oldest first: the `limit` messages just before `before` (a message id), or the latest ones. */
  list(conversationId: string, limit: number, before?: string): Promise<HelpdeskMessage[]>;
  get(conversationId: string, id: string): Promise<HelpdeskMessage | undefined>;
  findByChatMessage(chatMessageId: string): Promise<HelpdeskMessage | undefined>;
  /** Writes content, status, externalError and chatMessageId. */
  update(message: HelpdeskMessage): Promise<void>;
  /** Deletes the message and its attachments. */
  delete(id: string): Promise<void>;
}

export interface ConversationStores {
  conversations: ConversationStore;
  messages: HelpdeskMessageStore;
  inboxes: InboxStore;
  contacts: ContactStore;
  plans: WorkspacePlans;
  /** The workspace's labels (conversations name them; events carry their ids). */
  labels: LabelStore;
  attachments: AttachmentStore;
  /** Helpdesk events (spec 6.5), recorded in the same transaction as the change. */
  events: HelpdeskEventLog;
  /** The display name of a user (for activity lines), if any. */
  userName(userId: string): Promise<string | undefined>;
  /** A would-be assignee's roles in the workspace and whether they belong to the inbox; undefined when not a member. */
  assigneeStanding(workspaceId: string, inboxId: string, userId: string): Promise<{ roles: Role[]; inboxMember: boolean } | undefined>;
  /** The team in the workspace (held against deletion until the transaction ends) and whether the user is a member; undefined when no such team. */
  teamStanding: TeamStanding;
  /** Queues a snooze's expiry job in the same transaction (core/helpdesk/conversations/snooze-schedule.ts). */
  snoozes: SnoozeScheduler;
}

export interface ConversationDeps {
  clock: Clock;
  ids: IdGen;
}

export const conversationNotFound = () => notFound('Conversation not found');

/** Who may be assigned a conversation of an inbox: a member of the inbox, or anyone who sees every inbox. */
export async function assignable(stores: ConversationStores, workspaceId: string, inboxId: string, userId: string): Promise<boolean> {
  const standing = await stores.assigneeStanding(workspaceId, inboxId, userId);
  return standing !== undefined && (standing.inboxMember || seesEveryInbox({ userId, workspaceId, roles: standing.roles }));
}

/** Reads: every member, Agents only in their inboxes (others are 404, never 403). The list is inbox-list.ts. */
export async function getConversation(stores: ConversationStores, actor: Actor, id: string): Promise<Conversation> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  const conversation = await stores.conversations.get(actor.workspaceId, id);
  if (!conversation) throw conversationNotFound();
  if (!seesEveryInbox(actor) && !(await stores.inboxes.isMember(conversation.inboxId, actor.userId))) throw conversationNotFound();
  return conversation;
}

/** A conversation the actor may change: visible, `helpdesk.work` write, and the PRO plan. */
async function writable(stores: ConversationStores, actor: Actor, id: string): Promise<Conversation> {
  const conversation = await getConversation(stores, actor, id);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  return conversation;
}

export const REQUESTED_STATUSES = ['OPEN', 'PENDING', 'RESOLVED', 'SNOOZED'] as const satisfies readonly ConversationStatus[];

/**
 * `POST …/status`: the requested status becomes an event of the transition table (OPEN → reopen,
 * PENDING → pending, RESOLVED → resolve, SNOOZED → snooze until `snoozedUntil`). A change leaves
 * an activity message ("Conversation was resolved by Ana"); an automatic one would not.
 */
export async function changeConversationStatus(
  stores: ConversationStores,
  deps: ConversationDeps,
  actor: Actor,
  id: string,
  input: { status: ConversationStatus; snoozedUntil?: string | null },
): Promise<{ conversation: Conversation; changed: boolean; activity: HelpdeskMessage | null }> {
  const conversation = await writable(stores, actor, id);
  if (!CONVERSATION_STATUSES.includes(input.status)) throw badRequest(`body.status must be one of ${CONVERSATION_STATUSES.join(', ')}`);
  if (input.status !== 'SNOOZED' && input.snoozedUntil != null) throw badRequest('body.snoozedUntil is only for status SNOOZED');
  let event: ConversationEvent;
  switch (input.status) {
    case 'OPEN':
      event = { type: 'reopen' };
      break;
    case 'PENDING':
      event = { type: 'pending' };
      break;
    case 'RESOLVED':
      event = { type: 'resolve' };
      break;
    case 'SNOOZED': {
      if (input.snoozedUntil == null) throw badRequest('body.snoozedUntil is required for status SNOOZED');
      event = { type: 'snooze', until: new Date(input.snoozedUntil) };
      break;
    }
  }
  const now = deps.clock.now();
  const change = applyConversationEvent(conversation, event, now);
  const updated: Conversation = { ...conversation, status: change.status, snoozedUntil: change.snoozedUntil, updatedAt: now, lastActivityAt: now };
  const text = conversationActivityText(event, change, (await stores.userName(actor.userId)) ?? null);
  let activity: HelpdeskMessage | null = null;
  if (text !== null) {
    activity = activityMessage(deps, updated, text, actor.userId, now);
    await stores.messages.insert(activity);
  }
  await stores.conversations.update(updated);
  // The automatic, silent expiry of this snooze (core/helpdesk/conversations/snooze.ts), queued with it.
  if (updated.status === 'SNOOZED') await scheduleSnoozeExpiry(stores.snoozes, updated);
  if (change.changed) await stores.events.record(statusChanged(updated, conversation.status, actor.userId));
  if (activity) await stores.events.record(messageCreated(updated, activity));
  return { conversation: updated, changed: change.changed, activity };
}

export interface ConversationPatch {
  priority?: Priority | null;
  assigneeUserId?: string | null;
  customAttributes?: Record<string, unknown>;
  aiAgentEnabled?: boolean;
  /** A team of the workspace, or null to clear; the assignee rule with a team is in core/helpdesk/teams/team-assignment.ts. */
  teamId?: string | null;
}

/** Fields left out keep their value; `null` clears priority, assignee or team; customAttributes replaces the set. */
export async function updateConversation(stores: ConversationStores, deps: ConversationDeps, actor: Actor, id: string, patch: ConversationPatch): Promise<Conversation> {
  const conversation = await writable(stores, actor, id);
  if (patch.priority != null && !PRIORITIES.includes(patch.priority)) throw badRequest(`body.priority must be one of ${PRIORITIES.join(', ')} or null`);
  if (patch.assigneeUserId != null && !(await assignable(stores, actor.workspaceId, conversation.inboxId, patch.assigneeUserId))) {
    throw badRequest('body.assigneeUserId must be a member of the inbox, or a Manager, Admin or Owner of the workspace');
  }
  const { teamId, assigneeUserId } = await teamAssignment(stores.teamStanding, actor.workspaceId, conversation, patch);
  const assigneeChanged = assigneeUserId !== conversation.assigneeUserId;
  const updated: Conversation = {
    ...conversation,
    priority: patch.priority === undefined ? conversation.priority : patch.priority,
    assigneeUserId,
    // Assigning a person takes the conversation over from an agent bot (agent-bot-hold.ts: agentTakeover).
    assigneeAgentBotId: assigneeUserId !== null ? null : conversation.assigneeAgentBotId,
    teamId,
    // A new assignee has not seen anything yet.
    assigneeLastSeenAt: assigneeChanged ? null : conversation.assigneeLastSeenAt,
    customAttributes: patch.customAttributes ?? conversation.customAttributes,
    aiAgentEnabled: patch.aiAgentEnabled ?? conversation.aiAgentEnabled,
    updatedAt: deps.clock.now(),
  };
  await stores.conversations.update(updated);
  await recordChanges(stores, conversation, updated, actor.userId);
  return updated;
}

/** One event per kind of change (spec 6.5); fields with no event of their own go in `conversation.updated`. */
export async function recordChanges(stores: ConversationStores, before: Conversation, after: Conversation, actorUserId: string | null): Promise<void> {
  if (before.assigneeUserId !== after.assigneeUserId || before.teamId !== after.teamId || before.assigneeAgentBotId !== after.assigneeAgentBotId) {
    await stores.events.record(assigneeChanged(before, after, actorUserId));
  }
  if (before.priority !== after.priority) await stores.events.record(priorityChanged(before, after, actorUserId));
  if (before.aiAgentEnabled !== after.aiAgentEnabled) await stores.events.record(aiAgentChanged(after, actorUserId));
  const changedFields = JSON.stringify(before.customAttributes) === JSON.stringify(after.customAttributes) ? [] : ['customAttributes'];
  if (changedFields.length > 0) await stores.events.record(conversationUpdated(after, changedFields, actorUserId));
}

/**
 * Replaces the labels (normalised: trimmed, unique case-insensitively), spelt as the workspace's
 * labels are; a name that is not yet a label of the workspace becomes one. The event carries
 * the delta as label ids.
 */
export async function setConversationLabels(stores: ConversationStores, deps: ConversationDeps, actor: Actor, id: string, labels: string[]): Promise<Conversation> {
  const conversation = await writable(stores, actor, id);
  const wanted = await resolveLabels(stores, deps, actor.workspaceId, normaliseLabels(labels), actor.userId);
  const updated: Conversation = { ...conversation, labels: wanted.map((l) => l.name), updatedAt: deps.clock.now() };
  await stores.conversations.update(updated);
  const delta = labelDelta(conversation.labels, updated.labels);
  if (delta.added.length + delta.removed.length > 0) {
    const known = [...wanted, ...(await stores.labels.findByNames(actor.workspaceId, delta.removed))];
    const idOf = (name: string) => known.find((l) => labelKey(l.name) === labelKey(name))?.id;
    const ids = (names: string[]) => names.map(idOf).filter((x): x is string => x !== undefined);
    await stores.events.record(labelsChanged(updated, { addedLabelIds: ids(delta.added), removedLabelIds: ids(delta.removed) }, actor.userId));
  }
  return updated;
}

/**
 * The read marker. Spec 2.11 names it `assigneeLastSeenAt`: it moves when the assignee (or, on an
 * unassigned conversation, whoever reads it) marks it read; another agent reading leaves it.
 * A read marker is part of working the conversation, so it needs write and the PRO plan.
 */
export async function markConversationRead(stores: ConversationStores, deps: ConversationDeps, actor: Actor, id: string): Promise<Conversation> {
  const conversation = await writable(stores, actor, id);
  if (conversation.assigneeUserId !== null && conversation.assigneeUserId !== actor.userId) return conversation;
  const now = deps.clock.now();
  const updated: Conversation = { ...conversation, assigneeLastSeenAt: now, updatedAt: now };
  await stores.conversations.update(updated);
  await stores.events.record(conversationRead(updated, actor.userId));
  return updated;
}

/**
 * A message from a contact on an inbox's channel (run by the worker for `messages.upsert`):
 * the contact is found by phone or created; it joins the contact's latest conversation of the
 * inbox that is not RESOLVED (a SNOOZED or PENDING one reopens through `incomingMessage`), or a
 * new OPEN conversation starts (a RESOLVED conversation stays resolved: the new message opens a
 * new one, with its own displayId). Idempotent on `chatMessageId`: a replay stores nothing.
 */
export async function receiveIncoming(
  stores: ConversationStores,
  deps: ConversationDeps,
  inbox: Inbox,
  incoming: { phone: string; name: string | null; content: string; chatMessageId: string; receivedAt?: Date; attachments?: IncomingAttachment[] },
): Promise<{ conversation: Conversation; message: HelpdeskMessage; created: boolean } | null> {
  if (await stores.messages.findByChatMessage(incoming.chatMessageId)) return null;
  const now = deps.clock.now();
  let contact = await stores.contacts.findByPhone(inbox.workspaceId, incoming.phone);
  if (!contact) {
    contact = { id: deps.ids.next(), workspaceId: inbox.workspaceId, name: incoming.name, phone: incoming.phone, email: null, customAttributes: {}, createdAt: now, updatedAt: now };
    await stores.contacts.insert(contact);
  }
  // The helpdesk message takes the connection message's id (a UUID v7 given on receipt): the
  // worker may handle a contact's quick messages in any order, yet they list in arrival order.
  return joinConversation(stores, deps, inbox, contact, {
    id: incoming.chatMessageId,
    content: incoming.content,
    chatMessageId: incoming.chatMessageId,
    receivedAt: incoming.receivedAt,
    attachments: incoming.attachments,
  });
}

/**
 * A resolved contact's message on an inbox's channel (the network's, or an API channel's):
 * it joins the contact's latest unresolved conversation of the inbox or opens a new OPEN one,
 * records `conversation.created`, `status_changed` and `message.created`. Null when the
 * message store refuses it as a replay (`chatMessageId` already stored).
 */
export async function joinConversation(
  stores: ConversationStores,
  deps: ConversationDeps,
  inbox: Inbox,
  contact: Contact,
  incoming: { id?: string; content: string; chatMessageId: string | null; receivedAt?: Date; attachments?: IncomingAttachment[] },
): Promise<{ conversation: Conversation; message: HelpdeskMessage; created: boolean } | null> {
  const now = deps.clock.now();
  const { conversation, created } = await contactCase(stores.conversations, deps.ids, inbox, contact.id, { status: 'OPEN', lastActivityAt: now, createdAt: now, updatedAt: now });
  let message: HelpdeskMessage = {
    id: incoming.id ?? deps.ids.next(),
    conversationId: conversation.id,
    workspaceId: inbox.workspaceId,
    direction: 'incoming',
    private: false,
    content: incoming.content,
    senderUserId: null,
    chatMessageId: incoming.chatMessageId,
    status: null,
    externalError: null,
    createdAt: incoming.receivedAt ?? now,
  };
  if (!(await stores.messages.insert(message))) return null;
  message = await attachIncoming(stores, deps, message, incoming.attachments);
  const change = applyConversationEvent(conversation, { type: 'incomingMessage' }, now);
  const updated: Conversation = { ...conversation, status: change.status, snoozedUntil: change.snoozedUntil, lastActivityAt: now, updatedAt: now };
  await stores.conversations.update(updated);
  if (created) await stores.events.record(conversationCreated(updated));
  if (change.changed) await stores.events.record(statusChanged(updated, conversation.status, null));
  await stores.events.record(messageCreated(updated, message));
  return { conversation: updated, message, created };
}

export function activityMessage(deps: ConversationDeps, conversation: Conversation, content: string, senderUserId: string | null, now: Date): HelpdeskMessage {
  return {
    id: deps.ids.next(),
    conversationId: conversation.id,
    workspaceId: conversation.workspaceId,
    direction: 'activity',
    private: false,
    content,
    senderUserId,
    chatMessageId: null,
    status: null,
    externalError: null,
    createdAt: now,
  };
}
