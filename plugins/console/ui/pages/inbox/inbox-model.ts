/**
 * The inbox list's shapes (as `GET /v3/helpdesk/conversations` and `/counts` answer them) and its
 * state, which lives in the address: `#/inbox/<conversationId>?view=mine&status=OPEN&s=…`, so a
 * view can be bookmarked, reloaded and kept while moving from one conversation to the next.
 */
import { HELPDESK_EVENT_TYPES } from '../../../../../core/helpdesk/events.ts';
import type { Route } from '../../router.ts';

export interface ListedConversation {
  id: string;
  displayId: number;
  inboxId: string;
  contactId: string;
  status: 'OPEN' | 'PENDING' | 'SNOOZED' | 'RESOLVED';
  priority: 'LOW' | 'MEDIUM' | 'HIGH' | 'URGENT' | null;
  assigneeUserId: string | null;
  assigneeAgentBotId: string | null;
  teamId: string | null;
  labels: string[];
  lastActivityAt: string;
  createdAt: string;
  contact: { id: string; name: string | null; phone: string | null; email: string | null };
  lastMessage: { content: string; direction: 'incoming' | 'outgoing'; private: boolean; createdAt: string } | null;
  unread: boolean;
}

export interface ConversationPage {
  data: ListedConversation[];
  nextCursor: string | null;
  total: number;
  totalCapped: boolean;
}

export interface Badge {
  open: number;
  unread: number;
}

export interface Counts {
  views: { all: Badge; mine: Badge; unassigned: Badge };
  inboxes: Array<{ inboxId: string } & Badge>;
}

export interface Named {
  id: string;
  name: string;
}

export const VIEWS = [
  { value: 'mine', label: 'Mine' },
  { value: 'unassigned', label: 'Unassigned' },
  { value: 'all', label: 'All' },
] as const;
export type View = (typeof VIEWS)[number]['value'];

export const STATUSES = ['OPEN', 'PENDING', 'SNOOZED', 'RESOLVED'] as const;
export const PRIORITIES = ['URGENT', 'HIGH', 'MEDIUM', 'LOW'] as const;
export const SORTS = [
  { value: 'last_activity', label: 'Latest activity' },
  { value: 'created', label: 'Newest' },
  { value: 'priority', label: 'Priority' },
  { value: 'waiting', label: 'Waiting longest' },
] as const;

/** The list's filters, as the address holds them. `status` '' means every status. */
export interface ListState {
  view: View;
  inboxId: string;
  teamId: string;
  status: string;
  priority: string;
  labels: string;
  assigneeUserId: string;
  lastActivityFrom: string;
  s: string;
  sort: string;
}

const DEFAULTS: ListState = { view: 'mine', inboxId: '', teamId: '', status: 'OPEN', priority: '', labels: '', assigneeUserId: '', lastActivityFrom: '', s: '', sort: 'last_activity' };

/** The filters of the address; what it leaves out takes its default (the Mine view, OPEN, latest activity first). */
export function readListState(route: Route): ListState {
  const state = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS) as Array<keyof ListState>) {
    const value = route.query.get(key);
    if (value !== null) (state as Record<string, string>)[key] = value;
  }
  if (!VIEWS.some((v) => v.value === state.view)) state.view = DEFAULTS.view;
  return state;
}

/** The address's query for these filters: only what differs from the defaults. */
export function stateQuery(state: ListState): string {
  const params = new URLSearchParams();
  for (const key of Object.keys(DEFAULTS) as Array<keyof ListState>) if (state[key] !== DEFAULTS[key]) params.set(key, state[key]);
  const query = params.toString();
  return query ? `?${query}` : '';
}

/** The address of a conversation (or of the list alone), keeping the filters. */
export function inboxHref(state: ListState, conversationId?: string): string {
  return `#/inbox${conversationId ? `/${encodeURIComponent(conversationId)}` : ''}${stateQuery(state)}`;
}

/** Changes the filters in place (no new history entry per keystroke or click). */
export function replaceListState(state: ListState, conversationId: string | undefined): void {
  location.replace(inboxHref(state, conversationId));
}

/** The API query of the list's first page (or the page after `cursor`). */
export function listQuery(state: ListState, limit: number, cursor?: string): Record<string, string | number | undefined> {
  return {
    view: state.view,
    inboxId: state.inboxId || undefined,
    teamId: state.teamId || undefined,
    status: state.status || undefined,
    priority: state.priority || undefined,
    labels: state.labels || undefined,
    assigneeUserId: state.assigneeUserId || undefined,
    lastActivityFrom: state.lastActivityFrom || undefined,
    s: state.s.trim() || undefined,
    sort: state.sort,
    limit,
    cursor,
  };
}

/** What names a contact in the list: their name, else their phone, else their e-mail. */
export function contactName(contact: ListedConversation['contact']): string {
  return contact.name?.trim() || contact.phone || contact.email || 'Unknown contact';
}

/** A short time for a row: the hour today, the day this year, the date before. */
export function shortTime(at: string, now = new Date()): string {
  const date = new Date(at);
  if (date.toDateString() === now.toDateString()) return date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (date.getFullYear() === now.getFullYear()) return date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  return date.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/**
 * The events after which the list and its counts are read again: every conversation and message
 * event of the service's list (spec 6.5, 6.7) but a reply's status moving, which no row shows;
 * and `access.update`, the member's inboxes changing (added to or taken out of one).
 */
export const LIST_EVENTS = [
  ...HELPDESK_EVENT_TYPES.filter((type) => /^helpdesk\.(conversation|message)\./.test(type) && type !== 'helpdesk.message.status_changed'),
  'access.update',
];
