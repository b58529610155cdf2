import { t } from 'elysia';
import { defineTool, type McpToolDefinition } from '../../kernel/mcp.ts';
import { messagingDeps, messagingStores } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { OneOf } from '../../kernel/http.ts';
import { CONVERSATION_STATUSES } from '../../../core/helpdesk/conversations/conversation-status.ts';
import { changeConversationStatus, getConversation, PRIORITIES, REQUESTED_STATUSES, updateConversation } from '../../../core/helpdesk/conversations/conversations.ts';
import { listInboxConversations } from '../../../core/helpdesk/conversations/inbox-list.ts';
import { CONVERSATION_SORTS, CONVERSATION_VIEWS, MAX_LIMIT, readConversationQuery } from '../../../core/helpdesk/conversations/inbox-query.ts';
import { conversationListStores } from './list-store.ts';
import { listHelpdeskMessages, MAX_CONTENT_LENGTH, MAX_MESSAGE_LIMIT, sendHelpdeskMessage } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import { MAX_PER_PAGE } from '../../../core/shared/pagination.ts';
import { helpdeskMessageStores } from './store.ts';
import { present, presentMessage, presentWithWindow } from './views.ts';
import { conversationSendWindow } from '../../../core/helpdesk/conversations/conversation-window.ts';
import { conversationWindowStores } from './chat-windows.ts';
import { TemplateBody } from './template-body.ts';

/**
 * The helpdesk through MCP: an assistant lists and reads conversations (`helpdesk:read`) and
 * replies, assigns and changes the status (`helpdesk:write`, PRO plan). Every tool runs the same
 * use cases as the REST routes as the caller, so Agents see only their inboxes and the roles
 * matrix and plan gate apply.
 */

const conversationId = t.String({ minLength: 1, description: 'Id of the conversation (from list_conversations; not the displayId)' });
const deps = (ctx: PluginContext) => ({ clock: ctx.clock, ids: ctx.ids });

export const listConversationsTool = defineTool({
  name: 'list_conversations',
  title: 'List helpdesk conversations',
  description:
    'The shared inbox as an agent sees it (the same list as GET /v3/helpdesk/conversations): a view (all, mine, unassigned), filters, a search over contacts and message text, a sort, ' +
    'by page (page, perPage) or by keyset (limit, then cursor: the nextCursor of the previous answer). Each conversation has status, priority, assignee and labels. ' +
    'An Agent sees only the inboxes they belong to. Pass an id to read_conversation.',
  scopes: ['helpdesk:read'],
  input: t.Object({
    view: t.Optional(OneOf(CONVERSATION_VIEWS, { description: 'all (default), mine (assigned to you), unassigned (nobody holds it)' })),
    s: t.Optional(t.String({ maxLength: 200, description: 'Search: contact name, e-mail, phone and message text; every word must match as a prefix' })),
    status: t.Optional(t.String({ description: `One status or a comma-separated list: ${CONVERSATION_STATUSES.join(', ')}` })),
    priority: t.Optional(t.Array(OneOf(PRIORITIES), { maxItems: PRIORITIES.length, description: 'Only these priorities' })),
    labels: t.Optional(t.Array(t.String({ minLength: 1 }), { maxItems: 20, description: 'Label names of the workspace; the conversation has all of them' })),
    inboxId: t.Optional(t.String({ description: 'Only conversations of this inbox' })),
    teamId: t.Optional(t.String({ description: 'Only conversations of this team' })),
    assigneeUserId: t.Optional(t.String({ description: 'Only conversations assigned to this member; none: to nobody' })),
    sort: t.Optional(OneOf(CONVERSATION_SORTS, { description: 'last_activity (default), created, priority (URGENT first), waiting (longest waiting for a reply first)' })),
    cursor: t.Optional(t.String({ description: 'Keyset mode: the nextCursor of the previous answer (same sort)' })),
    limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Keyset mode: conversations per page, 1 to ${MAX_LIMIT}` })),
    page: t.Optional(t.Integer({ minimum: 1, description: 'Page mode: page number, default 1' })),
    perPage: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PER_PAGE, description: `Page mode: conversations per page, 1 to ${MAX_PER_PAGE}, default 10` })),
  }),
  annotations: { readOnlyHint: true },
  async run(input, { actor, ctx }) {
    const query = readConversationQuery({
      view: input.view,
      s: input.s,
      status: input.status,
      priority: input.priority?.join(','),
      labels: input.labels?.join(','),
      inboxId: input.inboxId,
      teamId: input.teamId,
      assigneeUserId: input.assigneeUserId,
      sort: input.sort,
      cursor: input.cursor,
      limit: input.limit === undefined ? undefined : String(input.limit),
      page: input.page === undefined ? undefined : String(input.page),
      per_page: input.perPage === undefined ? undefined : String(input.perPage),
    });
    const found = await listInboxConversations(ctx.storage.read(conversationListStores), actor, query);
    return {
      structured: {
        conversations: found.data.map(present),
        total: found.total,
        totalCapped: found.totalCapped,
        page: found.currentPage,
        totalPages: found.totalPages,
        nextCursor: found.nextCursor,
      },
      summary: `${found.total}${found.totalCapped ? '+' : ''} conversation(s); page ${found.currentPage} of ${Math.max(found.totalPages, 1)}${found.nextCursor ? '; more with nextCursor' : ''}.`,
    };
  },
});

export const readConversationTool = defineTool({
  name: 'read_conversation',
  title: 'Read a conversation',
  description:
    'One conversation (with sendWindow: null, or on an official connection { open, closesAt }; while it is closed a text reply is refused) and its latest messages, oldest first: incoming (from the contact), outgoing (replies, with delivery status; private notes are marked private) and activity lines. ' +
    'For older messages pass nextCursor back as `cursor`.',
  scopes: ['helpdesk:read'],
  input: t.Object({
    conversationId,
    limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_MESSAGE_LIMIT, description: `How many messages, 1 to ${MAX_MESSAGE_LIMIT}, default 20` })),
    cursor: t.Optional(t.String({ description: 'Id of the oldest message already read: returns the messages before it' })),
  }),
  annotations: { readOnlyHint: true },
  async run({ conversationId, limit = 20, cursor }, { actor, ctx }) {
    const stores = ctx.storage.read(helpdeskMessageStores);
    const conversation = await getConversation(stores, actor, conversationId);
    const messages = await listHelpdeskMessages(stores, actor, conversationId, { limit: String(limit), cursor });
    return {
      structured: {
        conversation: presentWithWindow(conversation, await conversationSendWindow(ctx.storage.read(conversationWindowStores), conversation, ctx.clock.now())),
        messages: messages.map(presentMessage),
        nextCursor: messages.length === limit ? messages[0]!.id : null,
      },
      summary: `Conversation #${conversation.displayId} (${conversation.status}), ${messages.length} message(s).`,
    };
  },
});

export const replyToConversationTool = defineTool({
  name: 'reply_to_conversation',
  title: 'Reply in a conversation',
  description:
    'Sends a reply to the contact on the inbox\'s channel (answered PENDING at once; delivery follows), or adds a private note for the team with private: true. ' +
    'Give content (text) or template (a pre-approved template: name, language and the components filling its variables, as POST …/messages takes it). ' +
    'On an official connection whose 24-hour window is closed (read_conversation shows sendWindow.open false) only a template goes out; text is refused. ' +
    'Refused while the network\'s AI agent holds the conversation (aiAgentEnabled).',
  scopes: ['helpdesk:write'],
  input: t.Object({
    conversationId,
    content: t.Optional(t.String({ minLength: 1, maxLength: MAX_CONTENT_LENGTH, description: 'The text of the reply or note; leave it out with template' })),
    template: t.Optional(TemplateBody),
    private: t.Optional(t.Boolean({ description: 'A private note for agents only: stored, never sent (not with template)' })),
  }),
  annotations: { destructiveHint: false, openWorldHint: true },
  async run({ conversationId, content, template, private: isPrivate }, { actor, ctx }) {
    const message = await ctx.storage.transaction(helpdeskMessageStores, (stores, trx) =>
      sendHelpdeskMessage(stores, { stores: messagingStores(trx, ctx), deps: messagingDeps(ctx) }, deps(ctx), actor, conversationId, { content, template, private: isPrivate }),
    );
    const summary = isPrivate ? 'Private note added.' : template ? `Template ${template.name} queued (${message.status}).` : `Reply queued (${message.status}).`;
    return { structured: { message: presentMessage(message) }, summary };
  },
});

export const assignConversationTool = defineTool({
  name: 'assign_conversation',
  title: 'Assign a conversation',
  description: 'Assigns the conversation to a member (a member of the inbox, or a Manager, Admin or Owner), or unassigns it with assigneeUserId null; optionally to a team.',
  scopes: ['helpdesk:write'],
  input: t.Object({
    conversationId,
    assigneeUserId: t.Nullable(t.String(), { description: 'The member to assign, or null to unassign' }),
    teamId: t.Optional(t.Nullable(t.String(), { description: 'A team of the workspace, or null to clear it; left out keeps the team' })),
  }),
  annotations: { idempotentHint: true },
  async run({ conversationId, assigneeUserId, teamId }, { actor, ctx }) {
    const conversation = await ctx.storage.transaction(helpdeskMessageStores, (stores) => updateConversation(stores, deps(ctx), actor, conversationId, { assigneeUserId, teamId }));
    return { structured: { conversation: present(conversation) }, summary: conversation.assigneeUserId ? 'Assigned.' : 'Unassigned.' };
  },
});

export const setConversationStatusTool = defineTool({
  name: 'set_conversation_status',
  title: 'Resolve, reopen, snooze or mark pending',
  description:
    'Changes the status of a conversation: RESOLVED resolves it, OPEN reopens it, PENDING marks it as waiting, SNOOZED snoozes it until snoozedUntil (it reopens by itself then, or when the contact writes).',
  scopes: ['helpdesk:write'],
  input: t.Object({
    conversationId,
    status: OneOf(REQUESTED_STATUSES, { description: 'The new status' }),
    snoozedUntil: t.Optional(t.String({ description: 'With SNOOZED: an ISO 8601 date-time in the future' })),
  }),
  annotations: { idempotentHint: true },
  async run({ conversationId, status, snoozedUntil }, { actor, ctx }) {
    const { conversation, changed } = await ctx.storage.transaction(helpdeskMessageStores, (stores) =>
      changeConversationStatus(stores, deps(ctx), actor, conversationId, { status, snoozedUntil }),
    );
    return { structured: { conversation: present(conversation), changed }, summary: changed ? `Now ${conversation.status}.` : `Already ${conversation.status}.` };
  },
});

export const HELPDESK_MCP_TOOLS: McpToolDefinition[] = [
  listConversationsTool,
  readConversationTool,
  replyToConversationTool,
  assignConversationTool,
  setConversationStatusTool,
];
