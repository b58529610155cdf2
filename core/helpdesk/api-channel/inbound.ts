import type { Outbox } from '../../shared/outbox.ts';
import { badRequest, DomainError, notFound } from '../../shared/errors.ts';
import { constantTimeEqual } from '../../tokens/secret.ts';
import type { DeliveryProgress } from '../../webhooks/delivery.ts';
import type { Contact } from '../contacts/contacts.ts';
import { joinConversation, type ConversationDeps, type ConversationStores } from '../conversations/conversations.ts';
import { messageStatusChanged } from '../events.ts';
import type { Inbox } from '../inboxes/inboxes.ts';
import { applyDeliveryOutcome, DELIVERY_OUTCOMES, type DeliveryOutcomeStatus, type MessageStatus } from '../conversations/message-status.ts';
import { helpdeskSignature, verifyHelpdeskSignature } from '../webhooks/webhook-signature.ts';

/**
 * The API channel, inbound side (spec 4.5, 5.6): the customer's own app pushes its users'
 * messages and the statuses of the replies it received into an API inbox, at
 * `POST /webhooks/helpdesk/{inboxId}`, with no `apikey`.
 *
 * Credentials (spec 5.6): `x-helpdesk-token: <the inbox's secret>`, or `x-helpdesk-signature:
 * <hex HMAC-SHA256 of the raw request body keyed with the inbox's secret>` (a `sha256=` prefix is
 * accepted too; the spec leaves the computation open, this is ours and is documented). With
 * `hmacMandatory` one of them is required; without, a request with neither is accepted; a
 * credential that is present but wrong is always refused, as is a request with two where one is
 * wrong.
 */
export const TOKEN_HEADER = 'x-helpdesk-token';
export const SIGNATURE_HEADER = 'x-helpdesk-signature';
export const MAX_SOURCE_ID_LENGTH = 255;
export const MAX_INBOUND_CONTENT_LENGTH = 4096;

/**
 * Hex HMAC-SHA256 of the raw bytes, keyed with the inbox's secret: both directions sign so, the
 * way helpdesk webhooks sign theirs (spec 6.5, 6.6), hence the one implementation.
 */
export const signApiChannelBody: (secret: string, raw: Uint8Array | string) => string = helpdeskSignature;

const inboxNotFound = () => notFound('No API inbox here');
const invalidCredential = (message: string) => new DomainError('unauthenticated', message);

/** Is the request the inbox's app's? 404 for anything but an API inbox; 401 for a bad or missing credential. */
export function authenticateInbound(
  inbox: Pick<Inbox, 'channelType' | 'inboundSecret' | 'hmacMandatory'> | undefined,
  credentials: { token?: string | null; signature?: string | null },
  raw: Uint8Array,
): void {
  if (!inbox || inbox.channelType !== 'API') throw inboxNotFound();
  const { token, signature } = credentials;
  const secret = inbox.inboundSecret;
  if (token != null && (secret === null || !constantTimeEqual(token, secret))) throw invalidCredential(`Invalid ${TOKEN_HEADER}`);
  if (signature != null && (secret === null || !verifyHelpdeskSignature(secret, raw, signature))) throw invalidCredential(`Invalid ${SIGNATURE_HEADER}`);
  if (token == null && signature == null && inbox.hmacMandatory) {
    throw invalidCredential(`This inbox requires ${TOKEN_HEADER} or ${SIGNATURE_HEADER} (hmacMandatory)`);
  }
}

export interface InboundMessage {
  kind: 'message';
  sourceId: string;
  content: string;
  sender: { name: string | null; email: string; identifier: string | null };
}

export interface InboundStatusUpdate {
  kind: 'status_update';
  sourceId: string;
  status: DeliveryOutcomeStatus;
  error: string | null;
}

/** The body as the app sent it, checked: 400 listing every broken rule. */
export function parseInbound(body: unknown): InboundMessage | InboundStatusUpdate {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest(['body must be a JSON object']);
  const b = body as Record<string, unknown>;
  const problems: string[] = [];
  const sourceId = text(b.sourceId, 'body.sourceId', MAX_SOURCE_ID_LENGTH, problems);
  if (b.event !== undefined && b.event !== 'status_update') problems.push('body.event must be "status_update", or left out to push a message');
  if (b.event === 'status_update') {
    const status = typeof b.status === 'string' ? b.status.trim().toUpperCase() : '';
    if (!(DELIVERY_OUTCOMES as readonly string[]).includes(status)) problems.push(`body.status must be one of ${DELIVERY_OUTCOMES.join(', ')}`);
    const error = b.error == null ? null : text(b.error, 'body.error', 1000, problems);
    if (error !== null && status !== 'FAILED') problems.push('body.error is only for status FAILED');
    if (problems.length > 0) throw badRequest(problems);
    return { kind: 'status_update', sourceId: sourceId!, status: status as DeliveryOutcomeStatus, error };
  }
  const content = text(b.content, 'body.content', MAX_INBOUND_CONTENT_LENGTH, problems);
  let sender: InboundMessage['sender'] | undefined;
  if (typeof b.sender !== 'object' || b.sender === null || Array.isArray(b.sender)) {
    problems.push('body.sender must be an object { name, email }');
  } else {
    const s = b.sender as Record<string, unknown>;
    const email = typeof s.email === 'string' ? s.email.trim().toLowerCase() : '';
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) problems.push('body.sender.email must be an email address');
    const name = s.name == null ? null : text(s.name, 'body.sender.name', 200, problems);
    const identifier = s.identifier == null ? null : text(s.identifier, 'body.sender.identifier', MAX_SOURCE_ID_LENGTH, problems);
    sender = { name, email, identifier };
  }
  if (problems.length > 0) throw badRequest(problems);
  return { kind: 'message', sourceId: sourceId!, content: content!, sender: sender! };
}

/** A trimmed, non-empty string of at most `max` characters, or a problem naming the field. */
function text(value: unknown, field: string, max: number, problems: string[]): string | null {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (trimmed.length === 0 || trimmed.length > max) {
    problems.push(`${field} must be a string of 1 to ${max} characters`);
    return null;
  }
  return trimmed;
}

/** A helpdesk message that travelled through an API inbox (in or out). */
export interface ApiChannelMessage {
  messageId: string;
  inboxId: string;
  workspaceId: string;
  conversationId: string;
  direction: 'incoming' | 'outgoing';
  /** Incoming: the app's id of the message. Outgoing: the id the app answered for the reply, if any. */
  sourceId: string | null;
  /** Outgoing: whom the reply is for, in the app's words. */
  recipientIdentifier: string | null;
  /** Outgoing: the POST to `webhookUrl`, attempted as a webhook delivery. */
  delivery: DeliveryProgress | null;
  /** Outgoing: what the last attempt came to ("HTTP 500", "delivery failed", "refused by the outbound policy: …"). */
  lastOutcome: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiChannelStore {
  /** Holds a transaction lock on `key` until the transaction ends (one replay at a time). */
  serialize(key: string): Promise<void>;
  insert(message: ApiChannelMessage): Promise<void>;
  update(message: ApiChannelMessage): Promise<void>;
  /** An outgoing message locked for update. */
  lockOutgoing(messageId: string): Promise<ApiChannelMessage | undefined>;
  findIncoming(inboxId: string, sourceId: string): Promise<ApiChannelMessage | undefined>;
  /** The outgoing message of the inbox the app names by its own id or by the message's id, locked for update. */
  findOutgoing(inboxId: string, sourceIdOrMessageId: string): Promise<ApiChannelMessage | undefined>;
  contactByEmail(workspaceId: string, email: string): Promise<Contact | undefined>;
  identifierOf(inboxId: string, contactId: string): Promise<string | undefined>;
  rememberIdentifier(inboxId: string, contactId: string, identifier: string, at: Date): Promise<void>;
}

/** What the API channel adds to the conversation ports: its own store, and the queue in the same transaction. */
export interface ApiChannelPorts {
  apiChannel: ApiChannelStore;
  outbox: Outbox;
}

export type ApiChannelStores = ConversationStores & ApiChannelPorts;

export interface ReceivedApiMessage {
  messageId: string;
  conversationId: string;
  contactId: string;
}

/**
 * A message pushed by the app: the contact is found by email (or created), the app's identifier
 * for them remembered (`sender.identifier`, else the email), and the message joins their
 * unresolved conversation of the inbox or opens one, as a network message does. Idempotent on
 * (inbox, sourceId): a replay stores nothing and answers the same ids.
 */
export async function receiveApiMessage(stores: ApiChannelStores, deps: ConversationDeps, inbox: Inbox, input: InboundMessage): Promise<ReceivedApiMessage> {
  await stores.apiChannel.serialize(`helpdesk-api:${inbox.id}:source:${input.sourceId}`);
  const seen = await stores.apiChannel.findIncoming(inbox.id, input.sourceId);
  if (seen) {
    const conversation = await stores.conversations.get(seen.workspaceId, seen.conversationId);
    return { messageId: seen.messageId, conversationId: seen.conversationId, contactId: conversation!.contactId };
  }
  // Two first messages of one person at once must not create two contacts.
  await stores.apiChannel.serialize(`helpdesk-contact:${inbox.workspaceId}:email:${input.sender.email}`);
  const now = deps.clock.now();
  let contact = await stores.apiChannel.contactByEmail(inbox.workspaceId, input.sender.email);
  if (!contact) {
    contact = { id: deps.ids.next(), workspaceId: inbox.workspaceId, name: input.sender.name, phone: null, email: input.sender.email, customAttributes: {}, createdAt: now, updatedAt: now };
    await stores.contacts.insert(contact);
  }
  await stores.apiChannel.rememberIdentifier(inbox.id, contact.id, input.sender.identifier ?? input.sender.email, now);
  const joined = await joinConversation(stores, deps, inbox, contact, { content: input.content, chatMessageId: null });
  // Without a connection message there is nothing the message store could refuse as a replay.
  if (!joined) throw new Error('an API-channel message was refused by the message store');
  await stores.apiChannel.insert({
    messageId: joined.message.id,
    inboxId: inbox.id,
    workspaceId: inbox.workspaceId,
    conversationId: joined.conversation.id,
    direction: 'incoming',
    sourceId: input.sourceId,
    recipientIdentifier: null,
    delivery: null,
    lastOutcome: null,
    createdAt: now,
    updatedAt: now,
  });
  return { messageId: joined.message.id, conversationId: joined.conversation.id, contactId: contact.id };
}

export interface UpdatedApiMessageStatus {
  messageId: string;
  conversationId: string;
  status: MessageStatus;
  externalError: string | null;
  changed: boolean;
}

/**
 * A status the app reports for a reply it received, naming it by the id it answered on delivery
 * (`{ sourceId }`) or by the reply's own id (`data.sourceId` of the POST). The move goes through
 * the transition table of message-status.ts (late or backward reports change nothing) and records
 * `helpdesk.message.status_changed` when the status changed. 404 for a message the inbox never sent.
 */
export async function receiveApiStatusUpdate(stores: ApiChannelStores, inbox: Inbox, input: InboundStatusUpdate): Promise<UpdatedApiMessageStatus> {
  const sent = await stores.apiChannel.findOutgoing(inbox.id, input.sourceId);
  const conversation = sent && (await stores.conversations.get(sent.workspaceId, sent.conversationId));
  const message = conversation && (await stores.messages.get(conversation.id, sent.messageId));
  if (!sent || !conversation || !message || message.status === null) throw notFound(`No message of this inbox has sourceId ${input.sourceId}`);
  const change = applyDeliveryOutcome({ status: message.status, externalError: message.externalError }, { status: input.status, externalError: input.error });
  if (change.changed) {
    const updated = { ...message, status: change.status, externalError: change.externalError };
    await stores.messages.update(updated);
    await stores.events.record(messageStatusChanged(conversation, updated, message.status));
  }
  return { messageId: message.id, conversationId: conversation.id, status: change.status, externalError: change.externalError, changed: change.changed };
}
