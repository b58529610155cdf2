import { t } from 'elysia';
import { chatHistory, listChats, MAX_HISTORY_LIMIT } from '../../../core/messaging/history.ts';
import { MAX_PER_PAGE } from '../../../core/shared/pagination.ts';
import { poolMessagingStores } from '../../connections/stores.ts';
import { presentMessage } from '../../http/presenters/message.ts';
import { defineTool } from '../tool.ts';
import { connectionId } from './connections.ts';

/**
 * Reading message history: `messages:read`. Owners and Admins only (spec 2.14, "read messages
 * on a connection"): the use cases refuse other roles.
 */

export const listChatsTool = defineTool({
  name: 'list_chats',
  title: 'List chats',
  description:
    'The chats (contacts and groups) of a connection, most recent first, with when each last had a message and when the contact last wrote. ' +
    'Pass a chat’s remoteJid as `chat` to list_messages.',
  scopes: ['messages:read'],
  input: t.Object({
    connectionId,
    search: t.Optional(t.String({ description: 'Searches the number and the contact’s name' })),
    page: t.Optional(t.Integer({ minimum: 1, description: 'Page number, default 1' })),
    perPage: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PER_PAGE, description: `Chats per page, 1 to ${MAX_PER_PAGE}, default 10` })),
  }),
  annotations: { readOnlyHint: true },
  async run({ connectionId, search, page, perPage }, { actor, ctx }) {
    const found = await listChats(poolMessagingStores(ctx), actor, connectionId, {
      page: page ?? 1,
      perPage: perPage ?? 10,
      search: search?.trim() || undefined,
    });
    const chats = found.data.map((c) => ({
      remoteJid: c.remoteJid,
      name: c.name,
      lastMessageAt: c.lastMessageAt.toISOString(),
      lastContactMessageAt: c.lastContactMessageAt?.toISOString() ?? null,
    }));
    return {
      structured: { chats, total: found.total, page: found.currentPage, totalPages: found.totalPages },
      summary: `${found.total} chat(s); page ${found.currentPage} of ${Math.max(found.totalPages, 1)}.`,
    };
  },
});

export const listMessagesTool = defineTool({
  name: 'list_messages',
  title: 'List a chat’s messages',
  description:
    'The recent messages of one chat, oldest first: direction (inbound from the contact, outbound from us), kind, status ' +
    '(outbound: PENDING, SENT, DELIVERED, READ, FAILED) and content; received media carry a signed downloadMediaUrl. ' +
    'For older messages pass nextCursor back as `cursor`.',
  scopes: ['messages:read'],
  input: t.Object({
    connectionId,
    chat: t.String({ minLength: 1, description: 'The contact’s phone number in international format, or a chat id (remoteJid from list_chats)' }),
    limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_HISTORY_LIMIT, description: `How many messages, 1 to ${MAX_HISTORY_LIMIT}, default 20` })),
    cursor: t.Optional(t.String({ description: 'Id of the oldest message already read: returns the messages before it' })),
  }),
  annotations: { readOnlyHint: true },
  async run({ connectionId, chat, limit = 20, cursor }, { actor, ctx }) {
    const messages = await chatHistory(poolMessagingStores(ctx), actor, connectionId, { chat, limit, cursor });
    return {
      structured: {
        messages: messages.map(presentMessage),
        // Fewer than asked for: the beginning of the chat was reached.
        nextCursor: messages.length === limit ? messages[0]!.id : null,
      },
      summary: `${messages.length} message(s), oldest first${messages.length === limit ? '; more before these (pass nextCursor as cursor)' : ''}.`,
    };
  },
});
