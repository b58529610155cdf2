import { t } from 'elysia';
import { defineTool, type McpToolDefinition } from '../../kernel/mcp.ts';
import { messagingDeps, messagingStores } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { OneOf } from '../../kernel/http.ts';
import { CONVERSATION_STATUSES } from '../../../core/helpdesk/conversations/conversation-status.ts';
import { changeConversationStatus, getConversation, listConversations, REQUESTED_STATUSES, updateConversation } from '../../../core/helpdesk/conversations/conversations.ts';
import { listHelpdeskMessages, MAX_CONTENT_LENGTH, MAX_MESSAGE_LIMIT, sendHelpdeskMessage } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import { MAX_PER_PAGE } from '../../../core/shared/pagination.ts';
import { helpdeskMessageStores } from './store.ts';
import { present, presentMessage } from './views.ts';

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
    'Conversations of the shared inbox, latest activity first: status (OPEN, PENDING, SNOOZED, RESOLVED), priority, assignee, labels. ' +
    'An Agent sees only the inboxes they belong to. Pass an id to read_conversation.',
  scopes: ['helpdesk:read'],
  input: t.Object({
    status: t.Optional(OneOf(CONVERSATION_STATUSES, { description: 'Only conversations in this status' })),
    inboxId: t.Optional(t.String({ description: 'Only conversations of this inbox' })),
    assigneeUserId: t.Optional(t.String({ description: 'Only conversations assigned to this member' })),
    page: t.Optional(t.Integer({ minimum: 1, description: 'Page number, default 1' })),
    perPage: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PER_PAGE, description: `Conversations per page, 1 to ${MAX_PER_PAGE}, default 10` })),
  }),
  annotations: { readOnlyHint: true },
  async run({ status, inboxId, assigneeUserId, page, perPage }, { actor, ctx }) {
    const found = await listConversations(ctx.storage.read(helpdeskMessageStores), actor, { page: page ?? 1, perPage: perPage ?? 10, search: undefined }, { status, inboxId, assigneeUserId });
    return {
      structured: { conversations: found.data.map(present), total: found.total, page: found.currentPage, totalPages: found.totalPages },
      summary: `${found.total} conversation(s); page ${found.currentPage} of ${Math.max(found.totalPages, 1)}.`,
    };
  },
});

export const readConversationTool = defineTool({
  name: 'read_conversation',
  title: 'Read a conversation',
  description:
    'One conversation and its latest messages, oldest first: incoming (from the contact), outgoing (replies, with delivery status; private notes are marked private) and activity lines. ' +
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
      structured: { conversation: present(conversation), messages: messages.map(presentMessage), nextCursor: messages.length === limit ? messages[0]!.id : null },
      summary: `Conversation #${conversation.displayId} (${conversation.status}), ${messages.length} message(s).`,
    };
  },
});

export const replyToConversationTool = defineTool({
  name: 'reply_to_conversation',
  title: 'Reply in a conversation',
  description:
    'Sends a reply to the contact on the inbox\'s channel (answered PENDING at once; delivery follows), or adds a private note for the team with private: true. ' +
    'Refused while the network\'s AI agent holds the conversation (aiAgentEnabled).',
  scopes: ['helpdesk:write'],
  input: t.Object({
    conversationId,
    content: t.String({ minLength: 1, maxLength: MAX_CONTENT_LENGTH, description: 'The text of the reply or note' }),
    private: t.Optional(t.Boolean({ description: 'A private note for agents only: stored, never sent' })),
  }),
  annotations: { destructiveHint: false, openWorldHint: true },
  async run({ conversationId, content, private: isPrivate }, { actor, ctx }) {
    const message = await ctx.storage.transaction(helpdeskMessageStores, (stores, trx) =>
      sendHelpdeskMessage(stores, { stores: messagingStores(trx, ctx), deps: messagingDeps(ctx) }, deps(ctx), actor, conversationId, { content, private: isPrivate }),
    );
    return { structured: { message: presentMessage(message) }, summary: isPrivate ? 'Private note added.' : `Reply queued (${message.status}).` };
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
