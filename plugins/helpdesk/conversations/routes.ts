import { t } from 'elysia';
import {
  changeConversationStatus,
  getConversation,
  markConversationRead,
  PRIORITIES,
  REQUESTED_STATUSES,
  setConversationLabels,
  updateConversation,
  type ConversationDeps,
} from '../../../core/helpdesk/conversations/conversations.ts';
import { listHelpdeskMessages, MAX_CONTENT_LENGTH, MAX_MESSAGE_LIMIT, sendHelpdeskMessage } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import { countConversations, listInboxConversations } from '../../../core/helpdesk/conversations/inbox-list.ts';
import { readConversationQuery } from '../../../core/helpdesk/conversations/inbox-query.ts';
import { MAX_ATTACHMENTS } from '../../../core/helpdesk/conversations/attachments.ts';
import { mediaLimitsText } from '../../../core/media/media-limits.ts';
import { deleteConversation, deleteNote, editNote } from '../../../core/helpdesk/conversations/message-edits.ts';
import { authenticatedRoutes, authErrors, OneOf, StandardError } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { messagingDeps, messagingStores } from '../../kernel/storage.ts';
import { helpdeskMessageStores } from './store.ts';
import { ConversationView, HelpdeskMessageView, present, presentMessage, presentWithWindow } from './views.ts';
import { conversationSendWindow } from '../../../core/helpdesk/conversations/conversation-window.ts';
import { startConversation } from '../../../core/helpdesk/conversations/start-conversation.ts';
import type { Conversation } from '../../../core/helpdesk/conversations/conversation.ts';
import { conversationWindowStores } from './chat-windows.ts';
import { ConversationCountsView, ConversationListQuery, ConversationListView, presentListItem } from './list-schemas.ts';
import { conversationListStores } from './list-store.ts';
import { TemplateBody } from './template-body.ts';

const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };
const MessageId = t.Object({ id: t.String(), messageId: t.String() });
const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) });
const AttachmentRefs = t.Optional(
  t.Array(
    t.Object({
      id: t.Optional(t.String({ description: 'An upload to this conversation (POST …/attachments) not yet on a message' })),
      mediaId: t.Optional(t.String({ description: 'Or: media of the workspace uploaded through the connection media API' })),
      fileName: t.Optional(t.String({ description: 'Overrides the file name' })),
    }),
    { maxItems: MAX_ATTACHMENTS, description: 'Files: a note takes several; a reply on a connection one, sent as a media message with the content as caption' },
  ),
);
const StartedConversationView = t.Object({
  ...ConversationView.properties,
  created: t.Boolean({ description: 'False when the contact already had an unresolved conversation in the inbox: the message went there' }),
  message: HelpdeskMessageView,
});

/** Helpdesk conversations (spec 2.11, 3.1, 4.6) and their messages (2.12, 3.2). */
export function conversationRoutes(ctx: PluginContext) {
  const deps: ConversationDeps = { clock: ctx.clock, ids: ctx.ids };
  const sendDeps = messagingDeps(ctx);
  /** A conversation on its own, with its send window (lists leave the window out: it costs reads). */
  const shown = async (c: Conversation) => presentWithWindow(c, await conversationSendWindow(ctx.storage.read(conversationWindowStores), c, ctx.clock.now()));

  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.conversations', prefix: '/v3/helpdesk/conversations', tags: ['Helpdesk'] })
    .get(
      '',
      async ({ actor, query }) => {
        const found = await listInboxConversations(ctx.storage.read(conversationListStores), actor, readConversationQuery(query));
        return { ...found, data: found.data.map(presentListItem) };
      },
      {
        query: ConversationListQuery,
        response: { ...authErrors, 200: ConversationListView },
        detail: {
          summary: 'Conversations: views, filters, search and sorts, by page or keyset cursor (an Agent sees those of their inboxes)',
          description:
            'Page mode (page, per_page) answers as before; keyset mode (cursor, limit) stays fast however deep it goes and never repeats or skips a conversation while others arrive. Both answer nextCursor. An unknown or malformed value is 400.',
        },
      },
    )
    .post(
      '',
      async ({ actor, body, set }) => {
        const started = await ctx.storage.transaction(helpdeskMessageStores, (s, trx) => startConversation(s, { stores: messagingStores(trx, ctx), deps: sendDeps }, deps, actor, body));
        set.status = 201;
        return { ...(await shown(started.conversation)), created: started.created, message: presentMessage(started.message) };
      },
      {
        body: t.Object({
          inboxId: t.String({ description: 'An inbox the caller sees (else 404)' }),
          contactId: t.Optional(t.String({ description: 'The contact to write to; or phone' })),
          phone: t.Optional(t.String({ maxLength: 40, description: 'International format: the workspace\'s contact with this phone, or a new one' })),
          name: t.Optional(t.String({ maxLength: 200, description: 'The name of a contact created for phone' })),
          content: t.Optional(t.String({ description: `Up to ${MAX_CONTENT_LENGTH} characters` })),
          template: t.Optional(TemplateBody),
          attachments: AttachmentRefs,
        }),
        response: { ...authErrors, ...NotFound, 201: StartedConversationView, 413: StandardError, 422: StandardError },
        detail: {
          summary: 'Start a conversation: write first to a contact (PRO plan); its unresolved conversation of the inbox is reused',
          description:
            'Exactly one of contactId and phone; content, a template or attachments. A new conversation is OPEN and assigned to the caller when they may hold it. The message goes out as a reply does: on an official connection whose 24-hour window is closed free text is 422 (the outbound window expired; a template is required) and nothing is created. Answers 201 with the conversation, its sendWindow, created and the message.',
        },
      },
    )
    .get('/counts', async ({ actor }) => countConversations(ctx.storage.read(conversationListStores), actor), {
      response: { ...authErrors, 200: ConversationCountsView },
      detail: { summary: 'Open and unread conversations per view and per inbox (an Agent: their inboxes), for the inbox badges' },
    })
    .get('/:id', async ({ actor, params }) => shown(await getConversation(ctx.storage.read(helpdeskMessageStores), actor, params.id)), {
      params: Id,
      response: { ...authErrors, ...NotFound, 200: ConversationView },
      detail: { summary: 'One conversation (by id; displayId is in the body)' },
    })
    .patch('/:id', async ({ actor, params, body }) => shown(await ctx.storage.transaction(helpdeskMessageStores, (s) => updateConversation(s, deps, actor, params.id, body))), {
      params: Id,
      body: t.Object({
        priority: t.Optional(t.Nullable(OneOf(PRIORITIES))),
        assigneeUserId: t.Optional(t.Nullable(t.String({ description: 'A member of the inbox, or a Manager, Admin or Owner; null unassigns' }))),
        customAttributes: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'Replaces the whole set' })),
        aiAgentEnabled: t.Optional(t.Boolean()),
        teamId: t.Optional(
          t.Nullable(
            t.String({
              description:
                'A team of the workspace; null clears it. With a team, a given assignee must be a member of it; moving to another team without an assignee unassigns one who is not a member',
            }),
          ),
        ),
      }),
      response: { ...authErrors, ...NotFound, 200: ConversationView },
      detail: { summary: 'Change priority, assignee, team, custom attributes or aiAgentEnabled (PRO plan); fields left out keep their value' },
    })
    .post(
      '/:id/status',
      async ({ actor, params, body, set }) => {
      set.status = 201;
      return shown((await ctx.storage.transaction(helpdeskMessageStores, (s) => changeConversationStatus(s, deps, actor, params.id, body))).conversation);
    },
      {
        params: Id,
        body: t.Object({
          status: t.UnionEnum([...REQUESTED_STATUSES], { description: 'OPEN reopens, PENDING waits, RESOLVED resolves, SNOOZED snoozes until snoozedUntil' }),
          snoozedUntil: t.Optional(t.Nullable(t.String({ format: 'date-time', description: 'Required with SNOOZED; strictly in the future' }))),
        }),
        response: { ...authErrors, ...NotFound, 201: ConversationView, 422: StandardError },
        detail: { summary: 'Change the status (PRO plan); a change leaves an activity message; a move the status table refuses is 422' },
      },
    )
    .post('/:id/labels', async ({ actor, params, body, set }) => {
      set.status = 201;
      return shown(await ctx.storage.transaction(helpdeskMessageStores, (s) => setConversationLabels(s, deps, actor, params.id, body.labels)));
    }, {
      params: Id,
      body: t.Object({ labels: t.Array(t.String(), { maxItems: 100, description: 'Replaces the labels; trimmed, unique case-insensitively' }) }),
      response: { ...authErrors, ...NotFound, 201: ConversationView },
      detail: { summary: 'Replace the labels (PRO plan)' },
    })
    .post('/:id/read', async ({ actor, params, set }) => {
      set.status = 201;
      return shown(await ctx.storage.transaction(helpdeskMessageStores, (s) => markConversationRead(s, deps, actor, params.id)));
    }, {
      params: Id,
      body: t.Optional(t.Object({}, { description: 'No fields; the body may be left out', additionalProperties: true })),
      response: { ...authErrors, ...NotFound, 201: ConversationView },
      detail: { summary: 'Mark as read by the assignee (assigneeLastSeenAt; PRO plan)' },
    })
    .get('/:id/messages', async ({ actor, params, query }) => (await listHelpdeskMessages(ctx.storage.read(helpdeskMessageStores), actor, params.id, query)).map(presentMessage), {
      params: Id,
      query: t.Object(
        {
          limit: t.Optional(t.String({ description: `Integer from 1 to ${MAX_MESSAGE_LIMIT}; default 20` })),
          cursor: t.Optional(t.String({ description: 'Id of the oldest message already held; answers the messages before it' })),
        },
        { additionalProperties: true },
      ),
      response: { ...authErrors, ...NotFound, 200: t.Array(HelpdeskMessageView, { description: 'Bare array, oldest first; fewer than limit means the beginning' }) },
      detail: { summary: 'Messages of the conversation, oldest first (cursor pagination)' },
    })
    .post(
      '/:id/messages',
      async ({ actor, params, body, set }) => {
        const message = await ctx.storage.transaction(helpdeskMessageStores, (s, trx) => sendHelpdeskMessage(s, { stores: messagingStores(trx, ctx), deps: sendDeps }, deps, actor, params.id, body));
        set.status = 201;
        return presentMessage(message);
      },
      {
        params: Id,
        body: t.Object({
          content: t.Optional(t.String({ description: `Up to ${MAX_CONTENT_LENGTH} characters; may be empty only with attachments; left out with a template` })),
          private: t.Optional(t.Boolean({ description: 'A private note: stored, never sent' })),
          attachments: AttachmentRefs,
          template: t.Optional(TemplateBody),
        }),
        response: { ...authErrors, ...NotFound, 201: HelpdeskMessageView, 409: StandardError, 413: StandardError, 422: StandardError },
        detail: {
          summary: 'Reply (PRO plan; PENDING at once, sent on the inbox\'s connection) or add a private note, with optional attachments; 422 while aiAgentEnabled',
          description: `A reply's file is sent as an image, video or audio by its type (otherwise a document): over that kind's limit, 413 and nothing is stored. ${mediaLimitsText()}`,
        },
      },
    )
    .patch('/:id/messages/:messageId', async ({ actor, params, body }) => presentMessage(await ctx.storage.transaction(helpdeskMessageStores, (s) => editNote(s, actor, params.id, params.messageId, body))), {
      params: MessageId,
      body: t.Object({ content: t.String({ description: `Up to ${MAX_CONTENT_LENGTH} characters; may be empty only on a note with attachments` }) }),
      response: { ...authErrors, ...NotFound, 200: HelpdeskMessageView, 422: StandardError },
      detail: { summary: 'Edit a private note (its author, or a Manager and above; PRO plan); replies and contact messages cannot change: 422' },
    })
    .delete(
      '/:id/messages/:messageId',
      async ({ actor, params }) => {
        await ctx.storage.transaction(helpdeskMessageStores, (s) => deleteNote(s, actor, params.id, params.messageId));
        return { id: params.messageId, deleted: true as const };
      },
      {
        params: MessageId,
        response: { ...authErrors, ...NotFound, 200: Deleted, 422: StandardError },
        detail: { summary: 'Delete a private note and its attachments (its author, or a Manager and above; PRO plan); other messages: 422' },
      },
    )
    .delete(
      '/:id',
      async ({ actor, params }) => {
        await ctx.storage.transaction(helpdeskMessageStores, (s) => deleteConversation(s, actor, params.id));
        return { id: params.id, deleted: true as const };
      },
      {
        params: Id,
        response: { ...authErrors, ...NotFound, 200: Deleted },
        detail: { summary: 'Delete a conversation with its messages and attachments (Manager and above, PRO plan)' },
      },
    );
}
