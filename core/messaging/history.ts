import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { badRequest, collectProblems, notFound } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { ConnectionStore } from '../connections/connection.ts';
import { connectionNotFound } from '../connections/connections.ts';
import type { Chat, ChatMessage, ChatStore, MessageStore } from './message.ts';
import { normalizeRecipient } from './outgoing.ts';

/** Reading a connection's messages: Owners and Admins only (spec 2.14, "Read messages on a connection"). */
export interface HistoryStores {
  connections: ConnectionStore;
  chats: ChatStore;
  messages: MessageStore;
}

export const MAX_HISTORY_LIMIT = 100;

export async function listChats(stores: HistoryStores, actor: Actor, connectionId: string, request: PageRequest): Promise<Page<Chat>> {
  authorize(actor.roles, 'messages.read', 'read');
  await readableConnection(stores, actor, connectionId);
  return stores.chats.list(connectionId, request);
}

/**
 * A chat's messages, oldest first, `limit` of them before `cursor` (the id of the oldest
 * message already held); the beginning is reached when fewer than `limit` come back.
 */
export async function chatHistory(
  stores: HistoryStores,
  actor: Actor,
  connectionId: string,
  query: { chat: string; limit?: number; cursor?: string },
): Promise<ChatMessage[]> {
  authorize(actor.roles, 'messages.read', 'read');
  await readableConnection(stores, actor, connectionId);
  const limit = query.limit ?? 50;
  const problems: string[] = [];
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_LIMIT) problems.push(`query.limit must be an integer from 1 to ${MAX_HISTORY_LIMIT}`);
  const chat = collectProblems(problems, () => normalizeRecipient(query.chat, 'query.chat'));
  if (problems.length > 0 || chat === undefined) throw badRequest(problems);
  const remoteJid = chat.includes('@') ? chat : `${chat}@s.whatsapp.net`;
  let before: ChatMessage | undefined;
  if (query.cursor) {
    before = await stores.messages.get(query.cursor);
    if (!before || before.connectionId !== connectionId || before.remoteJid !== remoteJid) throw badRequest(['query.cursor must be the id of a message of this chat']);
  }
  const newestFirst = await stores.messages.history(connectionId, remoteJid, { limit, before });
  return newestFirst.reverse();
}

export async function getMessage(stores: HistoryStores, actor: Actor, connectionId: string, messageId: string): Promise<ChatMessage> {
  authorize(actor.roles, 'messages.read', 'read');
  await readableConnection(stores, actor, connectionId);
  const message = await stores.messages.get(messageId);
  if (!message || message.connectionId !== connectionId) throw notFound(`Message ${messageId} not found`);
  return message;
}

async function readableConnection(stores: HistoryStores, actor: Actor, connectionId: string) {
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  return connection;
}
