import { workspaceReads } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { normalizeRecipient } from '../../messaging/outgoing.ts';
import { badRequest, conflict, DomainError, notFound } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import { assertHelpdeskWritable, type WorkspacePlans } from '../plan-gate.ts';

/** A person the workspace talks to through the helpdesk (spec 4.6). */
export interface Contact {
  id: string;
  workspaceId: string;
  name: string | null;
  /** E.164 with its `+`; unique in the workspace when set. */
  phone: string | null;
  email: string | null;
  customAttributes: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface ContactStore {
  /** Throws `duplicatePhone()` when another contact of the workspace has the phone. */
  insert(contact: Contact): Promise<void>;
  get(workspaceId: string, id: string): Promise<Contact | undefined>;
  /** `search` matches name, email (case-insensitive, substring) and phone (digits). */
  list(workspaceId: string, request: PageRequest): Promise<Page<Contact>>;
  /** Throws `duplicatePhone()` like insert. */
  update(contact: Contact): Promise<void>;
  findByPhone(workspaceId: string, phone: string): Promise<Contact | undefined>;
  /** The workspace's oldest contact with this (lower-case) e-mail; e-mails are not unique. */
  findByEmail(workspaceId: string, email: string): Promise<Contact | undefined>;
  /** Deletes the contact; its conversations (with their messages), notes and API identities go with it. */
  delete(id: string): Promise<void>;
}

export interface ContactStores {
  contacts: ContactStore;
  plans: WorkspacePlans;
}

export interface ContactDeps {
  clock: Clock;
  ids: IdGen;
}

export interface ContactInput {
  name?: string | null;
  phone?: string | null;
  email?: string | null;
  customAttributes?: Record<string, unknown>;
}

export const duplicatePhone = () => conflict('Another contact of this workspace has this phone number');
export const contactNotFound = () => notFound('Contact not found');

/** Reads: every member (helpdesk.work read). Writes: helpdesk.work and the PRO plan. */
const contactReads = workspaceReads<Contact>('helpdesk.work', contactNotFound);

export const listContacts = (stores: ContactStores, actor: Actor, request: PageRequest) => contactReads.list(stores.contacts, actor, request);

export const getContact = (stores: ContactStores, actor: Actor, id: string) => contactReads.get(stores.contacts, actor, id);


export async function createContact(stores: ContactStores, deps: ContactDeps, actor: Actor, input: ContactInput): Promise<Contact> {
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  const problems: string[] = [];
  const fields = {
    name: cleanName(input.name, problems),
    phone: cleanPhone(input.phone, problems),
    email: cleanEmail(input.email, problems),
  };
  if (!fields.name && !fields.phone && !fields.email) problems.push('body must have at least one of name, phone, email');
  if (problems.length > 0) throw badRequest(problems);
  if (fields.phone && (await stores.contacts.findByPhone(actor.workspaceId, fields.phone))) throw duplicatePhone();
  const now = deps.clock.now();
  const contact: Contact = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    ...fields,
    customAttributes: input.customAttributes ?? {},
    createdAt: now,
    updatedAt: now,
  };
  await stores.contacts.insert(contact);
  return contact;
}

/** Fields left out keep their value; `null` clears one; `customAttributes` replaces the set. */
export async function updateContact(stores: ContactStores, deps: ContactDeps, actor: Actor, id: string, patch: ContactInput): Promise<Contact> {
  const contact = await getContact(stores, actor, id);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  const problems: string[] = [];
  const updated: Contact = {
    ...contact,
    name: patch.name === undefined ? contact.name : cleanName(patch.name, problems),
    phone: patch.phone === undefined ? contact.phone : cleanPhone(patch.phone, problems),
    email: patch.email === undefined ? contact.email : cleanEmail(patch.email, problems),
    customAttributes: patch.customAttributes ?? contact.customAttributes,
    updatedAt: deps.clock.now(),
  };
  if (!updated.name && !updated.phone && !updated.email) problems.push('body must leave at least one of name, phone, email');
  if (problems.length > 0) throw badRequest(problems);
  if (updated.phone && updated.phone !== contact.phone) {
    const other = await stores.contacts.findByPhone(actor.workspaceId, updated.phone);
    if (other && other.id !== contact.id) throw duplicatePhone();
  }
  await stores.contacts.update(updated);
  return updated;
}

/** `+55 (11) 99999-9999`, `0055…` and `5511…` all become `+5511999999999`. */
export function normalizeContactPhone(phone: string): string {
  if (phone.includes('@')) throw badRequest(['body.phone must be a phone number in international format (E.164), such as +5511999999999']);
  try {
    return `+${normalizeRecipient(phone)}`;
  } catch (error) {
    if (error instanceof DomainError) throw badRequest(['body.phone must be a phone number in international format (E.164), such as +5511999999999']);
    throw error;
  }
}

export function cleanName(name: string | null | undefined, problems: string[]): string | null {
  if (name == null) return null;
  const trimmed = name.trim();
  if (trimmed.length > 200) problems.push('body.name must be at most 200 characters');
  return trimmed || null;
}

export function cleanPhone(phone: string | null | undefined, problems: string[]): string | null {
  if (phone == null || phone.trim() === '') return null;
  try {
    return normalizeContactPhone(phone);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    problems.push(...(error.messages ?? [error.message]));
    return null;
  }
}

export function cleanEmail(email: string | null | undefined, problems: string[]): string | null {
  if (email == null || email.trim() === '') return null;
  const trimmed = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(trimmed) || trimmed.length > 254) problems.push('body.email must be an email address');
  return trimmed;
}
