import { t } from 'elysia';
import { CONVERSATION_STATUSES } from '../../../core/helpdesk/conversations/conversation-status.ts';
import { PRIORITIES } from '../../../core/helpdesk/conversations/conversation.ts';
import { CONVERSATION_SORTS, CONVERSATION_VIEWS, DEFAULT_LIMIT, MAX_COUNTED, MAX_LIMIT } from '../../../core/helpdesk/conversations/inbox-query.ts';
import { MAX_PER_PAGE } from '../../../core/shared/pagination.ts';
import { PageOf, Timestamp, Uuid } from '../../kernel/http.ts';
import { LAST_MESSAGE_PREVIEW, type ListedConversationRow } from '../../../core/helpdesk/conversations/inbox-list.ts';
import { ConversationView, present } from './views.ts';

const text = (description: string) => t.Optional(t.String({ description }));

/**
 * The agent inbox's list (issue 23 item 1). Every parameter is a string checked by core's
 * readConversationQuery, which reports every broken rule at once as a 400: an optional enum in a
 * query gets its first value as a default from Elysia, which would silently narrow the list.
 */
export const ConversationListQuery = t.Object(
  {
    page: text('Page mode (as before): page number, an integer of at least 1; default 1. Not with cursor or limit'),
    per_page: text(`Page mode: items per page, an integer from 1 to ${MAX_PER_PAGE}; default 10`),
    cursor: text('Keyset mode: the nextCursor of the previous answer (opaque; valid with the same sort)'),
    limit: text(`Keyset mode: items per page, an integer from 1 to ${MAX_LIMIT}; default ${DEFAULT_LIMIT}. Given alone, answers the first page`),
    s: text(
      'Search: contact name, e-mail and phone, and the text of messages and notes. Words match as prefixes and all must match; a phone number matches by its digits, from its start, with or without the country code',
    ),
    view: text(`${CONVERSATION_VIEWS.join(', ')} (default all): mine is assigned to the caller, unassigned to nobody (no person, no agent bot)`),
    status: text(`Comma-separated statuses: ${CONVERSATION_STATUSES.join(', ')}`),
    inboxId: text('Only conversations of this inbox'),
    teamId: text('Only conversations of this team'),
    contactId: text("Only conversations of this contact (the contact panel's other conversations)"),
    assigneeUserId: text('Only conversations assigned to this member; none (or null): to nobody (as view=unassigned)'),
    labels: text('Comma-separated label names of the workspace (case-insensitive); the conversation has all of them'),
    priority: text(`Comma-separated priorities: ${PRIORITIES.join(', ')}`),
    createdFrom: text('Created at or after (ISO 8601 date or date-time)'),
    createdTo: text('Created at or before (ISO 8601)'),
    lastActivityFrom: text('Last activity at or after (ISO 8601)'),
    lastActivityTo: text('Last activity at or before (ISO 8601)'),
    sort: text(
      `${CONVERSATION_SORTS.join(', ')} (default last_activity): last_activity and created newest first; priority URGENT first, then latest activity; waiting: the contact waiting longest for a reply by a person or bot first, then those not waiting`,
    ),
  },
  { additionalProperties: true },
);

/** What a list row shows besides the conversation (GET /v3/helpdesk/conversations only, not GET …/{id}). */
export const ConversationListItemView = t.Composite([
  ConversationView,
  t.Object({
    contact: t.Object({ id: Uuid, name: t.Nullable(t.String()), phone: t.Nullable(t.String({ description: 'E.164' })), email: t.Nullable(t.String()) }),
    lastMessage: t.Nullable(
      t.Object(
        {
          content: t.String({ description: `Its first ${LAST_MESSAGE_PREVIEW} characters` }),
          direction: t.UnionEnum(['incoming', 'outgoing'], { description: 'incoming: from the contact; outgoing: a reply or a private note' }),
          private: t.Boolean({ description: 'A private note' }),
          createdAt: Timestamp,
        },
        { description: 'The latest message that is not an activity line; null when there is none' },
      ),
    ),
    unread: t.Boolean({ description: 'A contact message after the read marker (assigneeLastSeenAt), or one and no read marker: the rule of the counts\' unread, whatever the status' }),
  }),
]);

export function presentListItem(c: ListedConversationRow) {
  return {
    ...present(c),
    contact: c.contact,
    lastMessage: c.lastMessage && { ...c.lastMessage, createdAt: c.lastMessage.createdAt.toISOString() },
    unread: c.unread,
  };
}

export const ConversationListView = t.Composite([
  PageOf(ConversationListItemView),
  t.Object({
    nextCursor: t.Nullable(t.String({ description: 'Pass as cursor (with the same sort and filters) for the next page; null on the last page' })),
    totalCapped: t.Boolean({
      description: `Keyset mode counts matches up to ${MAX_COUNTED} (OPEN lists the counters answer: exactly): true when there are more (total then says that number); always false in page mode`,
    }),
  }),
]);

const Badge = {
  open: t.Integer({ description: 'Conversations in status OPEN' }),
  unread: t.Integer({ description: 'OPEN conversations with a contact message after the read marker (assigneeLastSeenAt, moved by POST …/read)' }),
};

export const ConversationCountsView = t.Object({
  views: t.Object({ all: t.Object(Badge), mine: t.Object(Badge), unassigned: t.Object(Badge) }, { description: 'The views of GET /v3/helpdesk/conversations' }),
  inboxes: t.Array(t.Object({ inboxId: t.String({ format: 'uuid' }), ...Badge }), { description: 'Every inbox the caller sees (an Agent: theirs), in creation order' }),
});
