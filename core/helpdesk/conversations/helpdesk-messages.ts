import type { Actor } from '../../identity/identity.ts';
import { authorize, can } from '../../identity/roles.ts';
import { acceptSend, type SendDeps, type SendStores } from '../../messaging/send.ts';
import { badRequest, DomainError, unprocessable } from '../../shared/errors.ts';
import { getConversation, type ConversationDeps, type ConversationStores, type HelpdeskMessage } from './conversations.ts';
import { assertHelpdeskWritable } from '../plan-gate.ts';
import { messageCreated } from '../events.ts';
import { attachToMessage, prepareAttachments, replyMediaContent, type AttachmentRef } from './attachments.ts';
import { withAttachments } from './message-attachments.ts';
import type { OutgoingContent } from '../../messaging/outgoing.ts';
import type { ApiChannelPorts } from '../api-channel/inbound.ts';
import { prepareApiReply, queueApiReply, type ApiReply } from '../api-channel/outbound.ts';
import { fillVariables, parametersOf } from '../../templates/template-text.ts';
import { isObject } from '../../templates/template-json.ts';

export const DEFAULT_MESSAGE_LIMIT = 20;
export const MAX_MESSAGE_LIMIT = 100;
export const MAX_CONTENT_LENGTH = 4096;

/**
 * The helpdesk itself as the sender of an automatic reply (a CSAT survey link, say): no person,
 * so the message has no `senderUserId` and its events name no actor. It sees every inbox; the
 * PRO plan and the conversation's own rules (aiAgentEnabled, the channel) still apply. Its id
 * is the nil UUID, which no user has (it reaches the connection message's `sentBy`, which has
 * no foreign key and is read joined to users).
 */
export const SYSTEM_USER_ID = '00000000-0000-0000-0000-000000000000';

export function systemActor(workspaceId: string): Actor {
  return { userId: SYSTEM_USER_ID, workspaceId, roles: ['OWNER'] };
}

const personOf = (actor: Actor): string | null => (actor.userId === SYSTEM_USER_ID ? null : actor.userId);

/** An agent bot answering through the bot API acts as the helpdesk and is named on its messages (core/helpdesk/bots/agent-bot-conversations.ts). */
const agentBotOf = (actor: Actor): string | null => (actor as Actor & { agentBotId?: string }).agentBotId ?? null;

/**
 * The ports of the message use cases. A reply's status is stored: the worker moves it as its
 * connection message's delivery changes (core/helpdesk/conversations/reply-status.ts), so reads need no more.
 */
export type HelpdeskMessageStores = ConversationStores & ApiChannelPorts;

/**
 * Spec 4.6: a bare array, oldest first; `cursor` is the id of the oldest message already held and
 * the answer is the `limit` messages just before it; fewer than `limit` means the beginning.
 */
export async function listHelpdeskMessages(
  stores: HelpdeskMessageStores,
  actor: Actor,
  conversationId: string,
  query: { limit?: string; cursor?: string },
): Promise<HelpdeskMessage[]> {
  const conversation = await getConversation(stores, actor, conversationId);
  const problems: string[] = [];
  let limit = DEFAULT_MESSAGE_LIMIT;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (!/^\d+$/.test(query.limit) || limit < 1 || limit > MAX_MESSAGE_LIMIT) problems.push(`limit must be an integer from 1 to ${MAX_MESSAGE_LIMIT}`);
  }
  if (query.cursor !== undefined && !(await stores.messages.get(conversation.id, query.cursor))) problems.push('cursor must be the id of a message of this conversation');
  if (problems.length > 0) throw badRequest(problems);
  return withAttachments(stores, await stores.messages.list(conversation.id, limit, query.cursor));
}

/**
 * `POST …/messages`: a private note is stored only; a reply is answered at once with `PENDING`
 * and goes out through `acceptSend` on the inbox's connection (credits, queue, send window),
 * or, on an API inbox, to its `webhookUrl` (api-channel/outbound.ts), in the caller's
 * transaction. Refused with 422 while `aiAgentEnabled` (spec 2.11). A `template` instead of
 * content goes out as a template message (what an official connection sends while the 24-hour
 * window is closed) and is shown as its text.
 */
export async function sendHelpdeskMessage(
  stores: HelpdeskMessageStores,
  send: { stores: SendStores; deps: SendDeps },
  deps: ConversationDeps,
  actor: Actor,
  conversationId: string,
  input: { content?: string; private?: boolean; attachments?: AttachmentRef[]; template?: TemplateReply },
): Promise<HelpdeskMessage> {
  const conversation = await getConversation(stores, actor, conversationId);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  const isPrivate = input.private === true;
  const hasFiles = (input.attachments?.length ?? 0) > 0;
  if (input.template !== undefined) {
    if (isPrivate || hasFiles || (input.content ?? '').trim() !== '') throw badRequest('body.template is a reply of its own: not with content, attachments or private');
    checkTemplateReply(input.template);
  }
  const content = input.template
    ? await templateReplyText(send.stores, conversation.workspaceId, input.template)
    : typeof input.content === 'string'
      ? input.content.trim()
      : '';
  // With files the text may be empty (a file alone is a message).
  if ((content.length === 0 && !hasFiles) || content.length > MAX_CONTENT_LENGTH) throw badRequest(`body.content must be 1 to ${MAX_CONTENT_LENGTH} characters`);
  const files = { attachments: stores.attachments, media: send.stores.media };
  const prepared = await prepareAttachments(files, deps, actor, conversation, input.attachments);
  const now = deps.clock.now();
  const message: HelpdeskMessage = {
    id: deps.ids.next(),
    conversationId: conversation.id,
    workspaceId: conversation.workspaceId,
    direction: 'outgoing',
    private: isPrivate,
    content,
    senderUserId: personOf(actor),
    senderAgentBotId: agentBotOf(actor),
    chatMessageId: null,
    status: isPrivate ? null : 'PENDING',
    externalError: null,
    createdAt: now,
  };
  let apiReply: ApiReply | undefined;
  if (!isPrivate) {
    if (conversation.aiAgentEnabled) throw unprocessable('The network\'s AI agent holds this conversation (aiAgentEnabled): nothing is sent while it is on');
    const inbox = await stores.inboxes.get(conversation.workspaceId, conversation.inboxId);
    if (inbox?.channelType === 'API') {
      if (input.template) throw unprocessable('Templates can only be sent on official connections');
      apiReply = await prepareApiReply(stores, inbox, conversation);
    } else {
      if (!inbox || inbox.connectionId === null) throw unprocessable('This inbox has no connection to send on');
      const contact = await stores.contacts.get(conversation.workspaceId, conversation.contactId);
      if (!contact?.phone) throw unprocessable('The contact has no phone number to reply to');
      try {
        // Spec 2.14 gives Agents no `messages.send` on the connection API, yet answering in their
        // inbox is their job: `helpdesk.work` write was checked above, and the reply goes out on
        // the inbox's connection on the helpdesk's behalf (a sender that may send).
        const sender: Actor = can(actor.roles, 'messages.send', 'write') ? actor : { ...actor, roles: ['MANAGER'] };
        // A network message holds one media item: a reply takes one file, the text as its caption.
        if (prepared.length > 1) throw badRequest('A reply on a connection carries at most one attachment (private notes take several)');
        const outgoing: OutgoingContent = input.template
          ? { kind: 'template', template: input.template }
          : prepared.length === 1
            ? await replyMediaContent(files, deps, inbox.connectionId, prepared[0]!, content)
            : { kind: 'text', text: content };
        const { message: sent } = await acceptSend(send.stores, send.deps, sender, inbox.connectionId, { to: contact.phone, content: outgoing });
        message.chatMessageId = sent.id;
      } catch (error) {
        // The connection's checks answer for the helpdesk: a missing connection is not the caller's 404.
        if (error instanceof DomainError && error.kind === 'not_found') throw unprocessable('The inbox\'s connection no longer exists');
        throw error;
      }
    }
  }
  await stores.messages.insert(message);
  await attachToMessage(stores, prepared, message.id);
  const shown = (await withAttachments(stores, [message]))[0]!;
  if (apiReply) await queueApiReply(stores, apiReply, shown);
  const updated = { ...conversation, lastActivityAt: now, updatedAt: now };
  await stores.conversations.update(updated);
  await stores.events.record(messageCreated(updated, shown));
  return shown;
}

/** A template reply (spec 4.3's template send: name, language, components as the messaging API takes them). */
export interface TemplateReply {
  name: string;
  language: string;
  components?: unknown[];
}

function checkTemplateReply(template: TemplateReply): void {
  const problems: string[] = [];
  if (typeof template.name !== 'string' || !template.name.trim()) problems.push('body.template.name must be a non-empty string');
  if (typeof template.language !== 'string' || !template.language.trim()) problems.push('body.template.language must be a language code such as en_US');
  if (template.components !== undefined && !Array.isArray(template.components)) problems.push('body.template.components must be an array');
  if (problems.length > 0) throw badRequest(problems);
}

/**
 * What the conversation shows for a template reply: its body with the variables filled in when
 * the workspace knows the template, else its name and the values given.
 */
async function templateReplyText(stores: SendStores, workspaceId: string, template: TemplateReply): Promise<string> {
  const typed = (components: unknown[] | undefined, type: string) =>
    (components ?? []).filter(isObject).find((c) => typeof c.type === 'string' && c.type.toUpperCase() === type);
  const values = parametersOf(typed(template.components, 'BODY'));
  const definition = await stores.templateDefinition?.(workspaceId, template.name, template.language);
  const body = typed(definition?.components, 'BODY')?.text;
  const text = typeof body === 'string' && body.trim() ? fillVariables(body, values) : [`[${template.name} (${template.language})]`, ...values.filter(Boolean)].join(' ');
  return text.slice(0, MAX_CONTENT_LENGTH);
}
