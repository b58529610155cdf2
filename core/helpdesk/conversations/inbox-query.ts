import { badRequest } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../../shared/pagination.ts';
import { CONVERSATION_STATUSES, type ConversationStatus } from './conversation-status.ts';
import { PRIORITIES, type Priority } from './conversation.ts';

/**
 * The agent inbox's list of conversations (issue 23 item 1): the query string of
 * `GET /v3/helpdesk/conversations` read into one checked query. Every broken rule is reported
 * at once (spec 7.2: `message` is an array); nothing unknown is silently ignored.
 */

export const CONVERSATION_VIEWS = ['all', 'mine', 'unassigned'] as const;
export type ConversationView = (typeof CONVERSATION_VIEWS)[number];

/**
 * last_activity: newest activity first; created: newest first; priority: URGENT first, then
 * newest activity; waiting: the contact waiting longest for a reply first (not waiting: last).
 */
export const CONVERSATION_SORTS = ['last_activity', 'created', 'priority', 'waiting'] as const;
export type ConversationSort = (typeof CONVERSATION_SORTS)[number];

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
/**
 * Keyset mode counts matches up to this many (along the page's walk, so a count costs about four
 * pages); beyond, `total` says this and `totalCapped` is true.
 */
export const MAX_COUNTED = 100;
const MAX_SEARCH_TERMS = 10;
const MAX_SEARCH_LENGTH = 200;

/** `none` (also spelt `null`, as clients write it): conversations nobody (no person, no agent bot) holds. */
export type AssigneeFilter = { userId: string } | 'none';

/** Where the next page starts: the last row's sort key and id (the page number is for the envelope). */
export interface Keyset {
  sort: ConversationSort;
  /** The sort's key values of the last row, as the store gave them (ISO dates, numbers, or null). */
  key: Array<string | number | null>;
  id: string;
  page: number;
}

export interface ConversationQuery {
  view: ConversationView;
  statuses?: ConversationStatus[];
  inboxId?: string;
  teamId?: string;
  contactId?: string;
  assignee?: AssigneeFilter;
  /** The conversation has every one of them (names as the workspace spells them). */
  labels?: string[];
  priorities?: Priority[];
  createdFrom?: Date;
  createdTo?: Date;
  lastActivityFrom?: Date;
  lastActivityTo?: Date;
  /** Lower-cased words (letters and digits only), each matched as a prefix; all must match. */
  search?: string[];
  sort: ConversationSort;
  limit: number;
  /** Page mode (old clients): rows to skip. Keyset mode: 0, `after` says where to go on. */
  offset: number;
  after?: Keyset;
  page: number;
  /** Keyset mode: count the matches only up to this many (an exact count of a million rows would cost more than the page). */
  countUpTo?: number;
}

export interface InboxListQuery {
  page?: string;
  per_page?: string;
  s?: string;
  status?: string;
  inboxId?: string;
  teamId?: string;
  contactId?: string;
  assigneeUserId?: string;
  view?: string;
  labels?: string;
  priority?: string;
  createdFrom?: string;
  createdTo?: string;
  lastActivityFrom?: string;
  lastActivityTo?: string;
  sort?: string;
  cursor?: string;
  limit?: string;
}

/**
 * The words of a search: split at anything but letters and digits, lower-cased, as the
 * database splits names, e-mails and messages (`simple` configuration). A search that looks like
 * a phone number (digits, spaces, `+ - ( ) .`) is one term, its digits: `+55 (11) 99999-0000`
 * finds the contact whose phone has those digits.
 */
export function searchTerms(s: string): string[] {
  const text = s.trim();
  if (/^[\d\s+().-]+$/.test(text) && /\d/.test(text)) return [text.replace(/\D/g, '')];
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
}

export function encodeCursor(keyset: Keyset): string {
  const json = JSON.stringify([keyset.sort, keyset.key, keyset.id, keyset.page]);
  return btoa(json).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const isDate = (k: unknown) => typeof k === 'string' && !Number.isNaN(new Date(k).getTime());

/** The key a store gives for each sort (plugins/helpdesk/conversations/list-store.ts): dates, a priority rank, a wait that may be none. */
function validKey(sort: ConversationSort, key: unknown[]): boolean {
  switch (sort) {
    case 'last_activity':
    case 'created':
      return key.length === 1 && isDate(key[0]);
    case 'priority':
      return key.length === 2 && Number.isInteger(key[0]) && isDate(key[1]);
    case 'waiting':
      return key.length === 1 && (key[0] === null || isDate(key[0]));
  }
}

/** Undefined when the cursor is not one we gave out. */
export function decodeCursor(cursor: string): Keyset | undefined {
  try {
    const padded = cursor.replace(/-/g, '+').replace(/_/g, '/');
    const [sort, key, id, page] = JSON.parse(atob(padded)) as unknown[];
    if (!CONVERSATION_SORTS.includes(sort as ConversationSort) || !Array.isArray(key) || typeof id !== 'string' || !isUuid(id) || !Number.isInteger(page)) return undefined;
    if (!validKey(sort as ConversationSort, key)) return undefined;
    return { sort: sort as ConversationSort, key, id, page: page as number };
  } catch {
    return undefined;
  }
}

const list = (raw: string | undefined) => (raw ?? '').split(',').map((v) => v.trim()).filter((v) => v.length > 0);

function oneOf<T extends string>(raw: string | undefined, allowed: readonly T[], name: string, problems: string[]): T[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  const values = list(raw);
  const wrong = values.filter((v) => !allowed.includes(v as T));
  if (values.length === 0 || wrong.length > 0) {
    problems.push(`query.${name} must be a comma-separated list of ${allowed.join(', ')}`);
    return undefined;
  }
  return [...new Set(values)] as T[];
}

function date(raw: string | undefined, name: string, problems: string[]): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const value = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw) ? new Date(raw) : new Date(NaN);
  if (Number.isNaN(value.getTime())) {
    problems.push(`query.${name} must be an ISO 8601 date or date-time`);
    return undefined;
  }
  return value;
}

function integer(raw: string | undefined, fallback: number, min: number, max: number, problem: string, problems: string[]): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    problems.push(problem);
    return fallback;
  }
  return Number(raw);
}

/**
 * Reads the query string. Page mode (`page`, `per_page`, as before) unless `cursor` or `limit` is
 * given: then keyset mode, `limit` rows after the cursor's row. A cursor belongs to its sort.
 */
export function readConversationQuery(raw: InboxListQuery): ConversationQuery {
  const problems: string[] = [];
  const view = raw.view === undefined || raw.view === '' ? 'all' : (CONVERSATION_VIEWS.find((v) => v === raw.view) ?? (problems.push(`query.view must be one of ${CONVERSATION_VIEWS.join(', ')}`), 'all'));
  const sort = raw.sort === undefined || raw.sort === '' ? 'last_activity' : (CONVERSATION_SORTS.find((v) => v === raw.sort) ?? (problems.push(`query.sort must be one of ${CONVERSATION_SORTS.join(', ')}`), 'last_activity'));
  const statuses = oneOf(raw.status, CONVERSATION_STATUSES, 'status', problems);
  const priorities = oneOf(raw.priority, PRIORITIES, 'priority', problems);
  const labels = raw.labels === undefined ? undefined : list(raw.labels);
  if (labels !== undefined && labels.length === 0) problems.push('query.labels must be a comma-separated list of label names');
  const assignee: AssigneeFilter | undefined = raw.assigneeUserId === undefined || raw.assigneeUserId === '' ? undefined : raw.assigneeUserId === 'none' || raw.assigneeUserId === 'null' ? 'none' : { userId: raw.assigneeUserId };
  let search: string[] | undefined;
  if (raw.s !== undefined && raw.s.trim() !== '') {
    if (raw.s.length > MAX_SEARCH_LENGTH) problems.push(`query.s must be at most ${MAX_SEARCH_LENGTH} characters`);
    search = searchTerms(raw.s);
    if (search.length > MAX_SEARCH_TERMS) problems.push(`query.s must have at most ${MAX_SEARCH_TERMS} words`);
  }
  const keysetMode = raw.cursor !== undefined || raw.limit !== undefined;
  let after: Keyset | undefined;
  if (raw.cursor !== undefined && raw.cursor !== '') {
    after = decodeCursor(raw.cursor);
    if (!after) problems.push('query.cursor is not a cursor this list gave out');
    else if (after.sort !== sort) problems.push(`query.cursor belongs to sort ${after.sort}, not ${sort}`);
  }
  if (keysetMode && raw.page !== undefined) problems.push('query.page cannot be combined with cursor or limit');
  const limit = keysetMode
    ? integer(raw.limit, DEFAULT_LIMIT, 1, MAX_LIMIT, `query.limit must be an integer from 1 to ${MAX_LIMIT}`, problems)
    : integer(raw.per_page, DEFAULT_PER_PAGE, 1, MAX_PER_PAGE, `query.per_page must be an integer from 1 to ${MAX_PER_PAGE}`, problems);
  const page = keysetMode ? (after?.page ?? 0) + 1 : integer(raw.page, 1, 1, Number.MAX_SAFE_INTEGER, 'query.page must be an integer of at least 1', problems);
  const query: ConversationQuery = {
    view,
    statuses,
    inboxId: raw.inboxId || undefined,
    teamId: raw.teamId || undefined,
    contactId: raw.contactId || undefined,
    assignee,
    labels,
    priorities,
    createdFrom: date(raw.createdFrom, 'createdFrom', problems),
    createdTo: date(raw.createdTo, 'createdTo', problems),
    lastActivityFrom: date(raw.lastActivityFrom, 'lastActivityFrom', problems),
    lastActivityTo: date(raw.lastActivityTo, 'lastActivityTo', problems),
    search,
    sort,
    limit,
    offset: keysetMode ? 0 : (page - 1) * limit,
    after,
    page,
    countUpTo: keysetMode ? MAX_COUNTED : undefined,
  };
  if (problems.length > 0) throw badRequest(problems);
  return query;
}
