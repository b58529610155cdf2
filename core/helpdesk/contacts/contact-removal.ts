import type { Actor } from '../../identity/identity.ts';
import { badRequest } from '../../shared/errors.ts';
import type { Clock } from '../../shared/ports.ts';
import type { Conversation } from '../conversations/conversation.ts';
import { conversationDeleted, conversationUpdated, type HelpdeskEventLog } from '../events.ts';
import { assertHelpdeskConfigurable } from '../plan-gate.ts';
import { getContact, type Contact, type ContactStores } from './contacts.ts';

/** What belongs to a contact besides its own row: conversations (with messages), notes, API-channel identities. */
export interface ContactRecords {
  /** The contact's conversations, every inbox, locked until the transaction ends. */
  conversationsOf(contactId: string): Promise<Conversation[]>;
  /**
   * Gives everything of `fromId` to `toId`: conversations, notes, and API-channel identities in
   * the inboxes where `toId` has none (`toId` keeps its own).
   */
  moveAll(fromId: string, toId: string): Promise<void>;
}

export interface ContactRemovalStores extends ContactStores {
  records: ContactRecords;
  events: HelpdeskEventLog;
}

/**
 * `DELETE /v3/helpdesk/contacts/{id}` (Managers and above, PRO, as deleting a conversation is):
 * the contact with its conversations, their messages and files, and its notes. Each conversation
 * records `helpdesk.conversation.deleted`, as when deleted one by one. The connections keep
 * their own chat history.
 */
export async function deleteContact(stores: ContactRemovalStores, actor: Actor, id: string): Promise<void> {
  const contact = await getContact(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const conversations = await stores.records.conversationsOf(contact.id);
  await stores.contacts.delete(contact.id);
  for (const conversation of conversations) await stores.events.record(conversationDeleted(conversation, actor.userId));
}

/**
 * `POST /v3/helpdesk/contacts/{id}/merge` `{ mergeContactId }` (Managers and above, PRO): the
 * contact in the path is kept. The other one's conversations, notes and API identities move to
 * it, its empty name, phone or e-mail are filled from the other, custom attributes are joined
 * (the kept contact's value wins a key both have), and the other is deleted, in one transaction.
 * Each moved conversation records `helpdesk.conversation.updated` with `changedFields:
 * ['contactId']`.
 */
export async function mergeContacts(stores: ContactRemovalStores, deps: { clock: Clock }, actor: Actor, keptId: string, input: { mergeContactId: string }): Promise<Contact> {
  const kept = await getContact(stores, actor, keptId);
  await assertHelpdeskConfigurable(stores.plans, actor);
  if (input.mergeContactId === kept.id) throw badRequest(['body.mergeContactId must be another contact than the one kept']);
  const merged = await stores.contacts.get(actor.workspaceId, input.mergeContactId);
  if (!merged) throw badRequest(['body.mergeContactId must be a contact of the workspace']);
  const moved = await stores.records.conversationsOf(merged.id);
  await stores.records.moveAll(merged.id, kept.id);
  // The other goes first: its phone is unique in the workspace until then.
  await stores.contacts.delete(merged.id);
  const updated: Contact = {
    ...kept,
    name: kept.name ?? merged.name,
    phone: kept.phone ?? merged.phone,
    email: kept.email ?? merged.email,
    customAttributes: { ...merged.customAttributes, ...kept.customAttributes },
    updatedAt: deps.clock.now(),
  };
  await stores.contacts.update(updated);
  for (const conversation of moved) await stores.events.record(conversationUpdated({ ...conversation, contactId: kept.id }, ['contactId'], actor.userId));
  return updated;
}
