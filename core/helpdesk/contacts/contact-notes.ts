import type { Actor } from '../../identity/identity.ts';
import { authorize, can } from '../../identity/roles.ts';
import { badRequest, forbidden, notFound } from '../../shared/errors.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import { assertHelpdeskWritable } from '../plan-gate.ts';
import { getContact, type ContactStores } from './contacts.ts';

/** A note about a contact, for the team (the console's contact panel); never sent. */
export interface ContactNote {
  id: string;
  workspaceId: string;
  contactId: string;
  content: string;
  /** Null once the author's account is gone. */
  authorUserId: string | null;
  createdAt: Date;
}

export interface ContactNoteStore {
  /** The contact's notes, newest first. */
  list(contactId: string): Promise<ContactNote[]>;
  get(contactId: string, id: string): Promise<ContactNote | undefined>;
  insert(note: ContactNote): Promise<void>;
  delete(id: string): Promise<void>;
}

export interface ContactNoteStores extends ContactStores {
  notes: ContactNoteStore;
}

export const MAX_NOTE_LENGTH = 4096;

/** Every member reads a contact's notes (contacts are the workspace's, not an inbox's). */
export async function listContactNotes(stores: ContactNoteStores, actor: Actor, contactId: string): Promise<ContactNote[]> {
  const contact = await getContact(stores, actor, contactId);
  return stores.notes.list(contact.id);
}

/** Whoever works the helpdesk writes notes (PRO plan). */
export async function addContactNote(stores: ContactNoteStores, deps: { clock: Clock; ids: IdGen }, actor: Actor, contactId: string, input: { content: string }): Promise<ContactNote> {
  const contact = await getContact(stores, actor, contactId);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  const content = typeof input.content === 'string' ? input.content.trim() : '';
  if (content.length === 0 || content.length > MAX_NOTE_LENGTH) throw badRequest([`body.content must be 1 to ${MAX_NOTE_LENGTH} characters`]);
  const note: ContactNote = { id: deps.ids.next(), workspaceId: actor.workspaceId, contactId: contact.id, content, authorUserId: actor.userId, createdAt: deps.clock.now() };
  await stores.notes.insert(note);
  return note;
}

/** Its author deletes a note, or a Manager and above (as with a conversation's private notes). */
export async function deleteContactNote(stores: ContactNoteStores, actor: Actor, contactId: string, noteId: string): Promise<void> {
  const contact = await getContact(stores, actor, contactId);
  const note = await stores.notes.get(contact.id, noteId);
  if (!note) throw notFound('Note not found');
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  if (note.authorUserId !== actor.userId && !can(actor.roles, 'helpdesk.configure', 'write')) throw forbidden('Only the author of a note, or a Manager, Admin or Owner, may delete it');
  await stores.notes.delete(note.id);
}
