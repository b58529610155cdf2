import type { Actor } from '../../identity/identity.ts';
import { authorize, can } from '../../identity/roles.ts';
import { badRequest, forbidden, notFound, unprocessable } from '../../shared/errors.ts';
import { withAttachments } from './message-attachments.ts';
import { getConversation, type Conversation, type ConversationStores, type HelpdeskMessage } from './conversations.ts';
import { conversationDeleted, messageDeleted, messageUpdated } from '../events.ts';
import { MAX_CONTENT_LENGTH } from './helpdesk-messages.ts';
import { assertHelpdeskConfigurable, assertHelpdeskWritable } from '../plan-gate.ts';

/**
 * Changing what was written. Only private notes can be edited or deleted: a reply or a
 * contact's message is on the network, where it cannot be changed (422); activity lines are
 * the conversation's history (422). An Agent changes only their own notes; Managers and above
 * (who configure the helpdesk) any note. Agents outside the inbox get 404 as everywhere.
 */
const messageNotFound = () => notFound('Message not found');

async function ownNote(stores: ConversationStores, actor: Actor, conversationId: string, messageId: string): Promise<{ conversation: Conversation; message: HelpdeskMessage }> {
  const conversation = await getConversation(stores, actor, conversationId);
  const message = await stores.messages.get(conversation.id, messageId);
  if (!message) throw messageNotFound();
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  if (!(message.direction === 'outgoing' && message.private)) {
    throw unprocessable('Only private notes can be changed: replies and contact messages are on the network, activity lines are history');
  }
  if (message.senderUserId !== actor.userId && !can(actor.roles, 'helpdesk.configure', 'write')) throw forbidden('Only the author of a note, or a Manager, Admin or Owner, may change it');
  return { conversation, message };
}

/** `PATCH …/messages/{messageId}`: new content of a private note; `message.updated` with changedFields. */
export async function editNote(stores: ConversationStores, actor: Actor, conversationId: string, messageId: string, input: { content: string }): Promise<HelpdeskMessage> {
  const { conversation, message } = await ownNote(stores, actor, conversationId, messageId);
  const content = typeof input.content === 'string' ? input.content.trim() : '';
  const [shownBefore] = await withAttachments(stores, [message]);
  // A note that carries files may lose its text; one without files needs some.
  const hasFiles = (shownBefore!.attachments?.length ?? 0) > 0;
  if ((content.length === 0 && !hasFiles) || content.length > MAX_CONTENT_LENGTH) throw badRequest(`body.content must be 1 to ${MAX_CONTENT_LENGTH} characters`);
  if (content === message.content) return shownBefore!;
  const updated: HelpdeskMessage = { ...shownBefore!, content };
  await stores.messages.update(updated);
  await stores.events.record(messageUpdated(conversation, updated, ['content'], actor.userId));
  return updated;
}

/** `DELETE …/messages/{messageId}`: the note and its files are gone; `message.deleted`. */
export async function deleteNote(stores: ConversationStores, actor: Actor, conversationId: string, messageId: string): Promise<void> {
  const { conversation, message } = await ownNote(stores, actor, conversationId, messageId);
  await stores.messages.delete(message.id);
  await stores.events.record(messageDeleted(conversation, message, actor.userId));
}

/**
 * `DELETE /v3/helpdesk/conversations/{id}`: the conversation, its messages and their files
 * (`helpdesk.configure`, PRO). The connection's own messages stay: they are the connection's
 * history. One `conversation.deleted` stands for everything removed.
 */
export async function deleteConversation(stores: ConversationStores, actor: Actor, id: string): Promise<void> {
  const conversation = await getConversation(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  await stores.conversations.delete(conversation.id);
  await stores.events.record(conversationDeleted(conversation, actor.userId));
}
