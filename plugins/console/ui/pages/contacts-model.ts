/**
 * The Contacts page's shapes and addresses: a contact as `GET /v3/helpdesk/contacts` answers it
 * (page envelope), a contact's conversations (`GET /v3/helpdesk/conversations?contactId=`), and
 * where in the inbox each of them opens.
 */
import { get, itemsOf } from '../api.ts';
import type { Route } from '../router.ts';
import { inboxHref, readListState, type ConversationPage } from './inbox/inbox-model.ts';
import type { Contact } from './inbox/conversation-model.ts';

export type { Contact };

export interface ListedContact extends Contact {
  createdAt: string;
  updatedAt: string;
}

export interface ContactPage {
  data: ListedContact[];
  total: number;
  totalPages: number;
  currentPage: number;
  perPage: number;
}

/** What `POST /v3/helpdesk/contacts/import` answers. */
export interface ImportReport {
  created: number;
  updated: number;
  skipped: Array<{ line: number; reason: string }>;
}

export const CONTACTS_PER_PAGE = 25;
/** The service's limit on an import's body (2 MiB), checked here first so a big file is not sent for nothing. */
export const MAX_IMPORT_BYTES = 2 * 1024 * 1024;

export const contactPath = (id: string) => `/v3/helpdesk/contacts/${encodeURIComponent(id)}`;

/** One page of the workspace's contacts, oldest first; `s` searches name, phone and email. */
export async function loadContactPage(search: string, page: number): Promise<ContactPage> {
  return get<ContactPage>('/v3/helpdesk/contacts', { page, per_page: CONTACTS_PER_PAGE, s: search.trim() || undefined });
}

/** Pages put one after the other: a contact already held (the list moved between pages) is not shown twice. */
export function appendPage(held: ListedContact[], next: ListedContact[]): ListedContact[] {
  const seen = new Set(held.map((c) => c.id));
  return [...held, ...next.filter((c) => !seen.has(c.id))];
}

/** The contact's conversations the member may see, latest activity first, every status. */
export async function loadContactConversations(contactId: string, limit: number): Promise<ConversationPage> {
  const answer = await get<ConversationPage>('/v3/helpdesk/conversations', { contactId, view: 'all', sort: 'last_activity', limit });
  return { ...answer, data: itemsOf(answer) };
}

/** A conversation in the inbox, its list showing every status of every view (where it is found whatever its state). */
export function conversationHref(conversationId: string): string {
  const everything = readListState({ path: '/inbox', parts: ['inbox'], query: new URLSearchParams({ view: 'all', status: '' }) } satisfies Route);
  return inboxHref(everything, conversationId);
}

/** "3 conversations", "1 conversation", "1,000+ conversations" (the service stopped counting). */
export function conversationCount(page: Pick<ConversationPage, 'total' | 'totalCapped'>): string {
  const n = page.total.toLocaleString();
  const noun = page.total === 1 && !page.totalCapped ? 'conversation' : 'conversations';
  return `${n}${page.totalCapped ? '+' : ''} ${noun}`;
}
