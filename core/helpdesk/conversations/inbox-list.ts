import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { badRequest } from '../../shared/errors.ts';
import type { Page } from '../../shared/pagination.ts';
import { seesEveryInbox } from '../inboxes/inboxes.ts';
import type { LabelStore } from '../labels/labels-catalogue.ts';
import { labelKey } from '../labels/label-sets.ts';
import type { Conversation } from './conversation.ts';
import { encodeCursor, type ConversationQuery, type ConversationView, type Keyset } from './inbox-query.ts';

/** What a row of the agent's list shows besides the conversation itself. */
export interface ListRowSummary {
  contact: { id: string; name: string | null; phone: string | null; email: string | null };
  /** The latest message that is not an activity line (a contact message, reply or note), its text cut to LAST_MESSAGE_PREVIEW characters. */
  lastMessage: { content: string; direction: 'incoming' | 'outgoing'; private: boolean; createdAt: Date } | null;
  /** A contact message after the read marker, or one and no read marker: the rule of the counts' `unread`. */
  unread: boolean;
}

export const LAST_MESSAGE_PREVIEW = 200;

export type ListedConversationRow = Conversation & ListRowSummary;

/** A row of the list with the values it sorts by (what a cursor carries). */
export interface ListedConversation {
  conversation: ListedConversationRow;
  key: Keyset['key'];
}

/** Open and unread conversations of one inbox, in total and in the `mine` and `unassigned` views. */
export interface InboxTally {
  inboxId: string;
  open: number;
  unread: number;
  mineOpen: number;
  mineUnread: number;
  unassignedOpen: number;
  unassignedUnread: number;
}

export interface ConversationListStore {
  /**
   * Up to `query.limit + 1` rows (the extra one says another page follows) and the number of
   * matching conversations (up to `query.countUpTo + 1` when that is set). `me`: whose `mine` view it is; `onlyFor`: an Agent, who sees only
   * the conversations of their inboxes.
   */
  find(workspaceId: string, query: ConversationQuery, me: string, onlyFor: string | undefined): Promise<{ rows: ListedConversation[]; total: number }>;
  /** One tally per inbox the member sees (`onlyFor` as in `find`), zero counts included. */
  tally(workspaceId: string, me: string, onlyFor: string | undefined): Promise<InboxTally[]>;
}

export interface ConversationListStores {
  conversationList: ConversationListStore;
  labels: LabelStore;
}

export type ConversationList = Page<ListedConversationRow> & { nextCursor: string | null; totalCapped: boolean };

/**
 * The agent inbox's list: a view (all, mine, unassigned) with filters, search and a sort, in
 * pages (`page`/`per_page`) or by keyset (`cursor`/`limit`). An Agent sees only their inboxes'
 * conversations, whatever is asked. Label names are the workspace's: an unknown one is 400.
 */
export async function listInboxConversations(stores: ConversationListStores, actor: Actor, query: ConversationQuery): Promise<ConversationList> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  let labels = query.labels;
  if (labels !== undefined) {
    const known = await stores.labels.findByNames(actor.workspaceId, labels);
    const missing = labels.filter((name) => !known.some((l) => labelKey(l.name) === labelKey(name)));
    if (missing.length > 0) throw badRequest([`query.labels names unknown labels: ${missing.join(', ')}`]);
    labels = labels.map((name) => known.find((l) => labelKey(l.name) === labelKey(name))!.name);
  }
  const onlyFor = seesEveryInbox(actor) ? undefined : actor.userId;
  const { rows, total } = await stores.conversationList.find(actor.workspaceId, { ...query, labels }, actor.userId, onlyFor);
  const shown = rows.slice(0, query.limit);
  const last = shown.at(-1);
  const nextCursor = rows.length > query.limit && last ? encodeCursor({ sort: query.sort, key: last.key, id: last.conversation.id, page: query.page }) : null;
  const totalCapped = query.countUpTo !== undefined && total > query.countUpTo;
  const counted = totalCapped ? query.countUpTo! : total;
  return {
    data: shown.map((r) => r.conversation),
    total: counted,
    totalCapped,
    totalPages: Math.ceil(counted / query.limit),
    currentPage: query.page,
    perPage: query.limit,
    nextCursor,
  };
}

export interface Badge {
  open: number;
  unread: number;
}

export interface ConversationCounts {
  views: Record<ConversationView, Badge>;
  inboxes: Array<{ inboxId: string } & Badge>;
}

/**
 * The inbox UI's badges. `open`: conversations in status OPEN. `unread`: OPEN conversations with
 * a contact message after the read marker (`assigneeLastSeenAt`, moved by `POST …/read`), or
 * with a contact message and no read marker at all.
 */
export async function countConversations(stores: ConversationListStores, actor: Actor): Promise<ConversationCounts> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  const tallies = await stores.conversationList.tally(actor.workspaceId, actor.userId, seesEveryInbox(actor) ? undefined : actor.userId);
  const sum = (open: (t: InboxTally) => number, unread: (t: InboxTally) => number): Badge => ({
    open: tallies.reduce((n, t) => n + open(t), 0),
    unread: tallies.reduce((n, t) => n + unread(t), 0),
  });
  return {
    views: {
      all: sum((t) => t.open, (t) => t.unread),
      mine: sum((t) => t.mineOpen, (t) => t.mineUnread),
      unassigned: sum((t) => t.unassignedOpen, (t) => t.unassignedUnread),
    },
    inboxes: tallies.map((t) => ({ inboxId: t.inboxId, open: t.open, unread: t.unread })),
  };
}
