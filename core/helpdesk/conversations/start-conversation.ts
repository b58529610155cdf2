import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import type { SendDeps, SendStores } from '../../messaging/send.ts';
import { badRequest } from '../../shared/errors.ts';
import { normalizeContactPhone, type Contact } from '../contacts/contacts.ts';
import { assigneeChanged, conversationCreated } from '../events.ts';
import { visibleInbox, type Inbox } from '../inboxes/inboxes.ts';
import { assertHelpdeskWritable } from '../plan-gate.ts';
import type { AttachmentRef } from './attachments.ts';
import { contactCase } from './contact-case.ts';
import { assignable, conversationNotFound, type ConversationDeps, type Conversation, type HelpdeskMessage } from './conversations.ts';
import { sendHelpdeskMessage, type HelpdeskMessageStores, type TemplateReply } from './helpdesk-messages.ts';

export interface StartConversationInput {
  inboxId: string;
  /** The contact to write to, or… */
  contactId?: string;
  /** …a phone: the workspace's contact with it, or a new contact (named `name`). */
  phone?: string;
  name?: string;
  content?: string;
  template?: TemplateReply;
  attachments?: AttachmentRef[];
}

/**
 * `POST /v3/helpdesk/conversations`: an agent writes first. The contact's unresolved
 * conversation of the inbox is reused (a contact has one case per inbox, contact-case.ts), else
 * a new OPEN one opens, assigned to the caller when they may hold it. The first message goes
 * out through the reply path (sendHelpdeskMessage), so every rule of a reply holds: on an
 * official connection with the send window closed, free text is 422 and a template goes out.
 * All in the caller's transaction: a refused message leaves no conversation and no contact.
 */
export async function startConversation(
  stores: HelpdeskMessageStores,
  send: { stores: SendStores; deps: SendDeps },
  deps: ConversationDeps,
  actor: Actor,
  input: StartConversationInput,
): Promise<{ conversation: Conversation; message: HelpdeskMessage; created: boolean }> {
  const inbox = await visibleInbox(stores, actor, input.inboxId);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  if (input.content === undefined && input.template === undefined && (input.attachments?.length ?? 0) === 0) {
    throw badRequest('body must have content, a template or attachments');
  }
  const contact = await contactToWrite(stores, deps, actor, input);
  const now = deps.clock.now();
  const { conversation, created } = await contactCase(stores.conversations, deps.ids, inbox, contact.id, { status: 'OPEN', lastActivityAt: now, createdAt: now, updatedAt: now });
  if (created) await openedBy(stores, actor, inbox, conversation);
  const message = await sendHelpdeskMessage(stores, send, deps, actor, conversation.id, { content: input.content, template: input.template, attachments: input.attachments });
  const current = await stores.conversations.get(actor.workspaceId, conversation.id);
  if (!current) throw conversationNotFound();
  return { conversation: current, message, created };
}

/** The contact named by id, or found (or created) by phone; exactly one of the two. */
async function contactToWrite(stores: HelpdeskMessageStores, deps: ConversationDeps, actor: Actor, input: StartConversationInput): Promise<Contact> {
  if ((input.contactId === undefined) === (input.phone === undefined)) throw badRequest('body must have exactly one of contactId, phone');
  if (input.contactId !== undefined) {
    const contact = await stores.contacts.get(actor.workspaceId, input.contactId);
    if (!contact) throw badRequest('body.contactId must be a contact of the workspace');
    return contact;
  }
  const phone = normalizeContactPhone(input.phone!);
  const known = await stores.contacts.findByPhone(actor.workspaceId, phone);
  if (known) return known;
  const name = input.name?.trim() || null;
  if (name !== null && name.length > 200) throw badRequest('body.name must be at most 200 characters');
  const now = deps.clock.now();
  const contact: Contact = { id: deps.ids.next(), workspaceId: actor.workspaceId, name, phone, email: null, customAttributes: {}, createdAt: now, updatedAt: now };
  await stores.contacts.insert(contact);
  return contact;
}

/** A new conversation is announced, then held by whoever opened it when they may hold one of the inbox (round-robin then leaves it). */
async function openedBy(stores: HelpdeskMessageStores, actor: Actor, inbox: Inbox, conversation: Conversation): Promise<void> {
  await stores.events.record(conversationCreated(conversation));
  if (!(await assignable(stores, actor.workspaceId, inbox.id, actor.userId))) return;
  const assigned: Conversation = { ...conversation, assigneeUserId: actor.userId };
  await stores.conversations.update(assigned);
  await stores.events.record(assigneeChanged(conversation, assigned, actor.userId));
}
