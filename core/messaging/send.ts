import type { Actor, IdentityStore } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { reserveBatchIfCovered, reserveCredits, type CreditStore } from '../plans/metering.ts';
import type { PlanCatalog } from '../plans/plans.ts';
import { badRequest, DomainError } from '../shared/errors.ts';
import type { Outbox } from '../shared/outbox.ts';
import type { Clock, IdGen } from '../shared/ports.ts';
import type { Connection, ConnectionStore } from '../connections/connection.ts';
import { connectionNotFound } from '../connections/connections.ts';
import type { NetworkDriver } from '../connections/driver.ts';
import { sendableMedia, type MediaStore } from '../media/media.ts';
import type { ChatMessage, ChatStore, MessageStore } from './message.ts';
import { isMediaKind, normalizeRecipient, type OutgoingContent } from './outgoing.ts';
import { assertMaySend } from './send-window.ts';
import type { TemplateComponentRules } from '../templates/component-rules.ts';
import { templateAsText } from '../templates/template-text.ts';
import { checkPluginComponents, checkSend } from '../templates/components.ts';
import { checkTemplateSendOn, type SendableTemplates } from '../templates/template-send.ts';

export interface SendStores {
  connections: ConnectionStore;
  messages: MessageStore;
  chats: ChatStore;
  credits: CreditStore;
  identity: IdentityStore;
  media: MediaStore;
  outbox: Outbox;
  /** The connection's stored templates: a template send is checked against its own (APPROVED, components that fit). */
  templates: SendableTemplates;
  /** A template's stored definition by name and language, wherever the workspace keeps it (for the degraded text). */
  templateDefinition?(workspaceId: string, name: string, language: string): Promise<{ components: unknown[] } | undefined>;
}

export interface SendDeps {
  clock: Clock;
  ids: IdGen;
  plans: PlanCatalog;
  drivers: ReadonlyMap<string, NetworkDriver>;
  /** Template components the enabled plugins teach (a carousel degrades to text through them). */
  templateComponents?: TemplateComponentRules;
}

export interface SendRequest {
  to: unknown;
  content: OutgoingContent;
  /** Id of a message of this chat (ours or the network's) this one replies to. */
  replyTo?: string;
  /** A retried request with the same key answers the first message instead of sending again. */
  idempotencyKey?: string;
}

/**
 * Accepts a message for sending: checks, reserves its credit and stores it PENDING, which queues
 * its driver send (the message rows are the send queue: send-record.ts), all in the caller's
 * transaction. Returns at once; delivery is asynchronous.
 */
export async function acceptSend(
  stores: SendStores,
  deps: SendDeps,
  actor: Actor,
  connectionId: string,
  request: SendRequest,
): Promise<{ message: ChatMessage; created: boolean }> {
  authorize(actor.roles, 'messages.send', 'write');
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);

  if (request.idempotencyKey) {
    // Two requests with one key at once: the workspace row lock makes the second wait for the
    // first to commit, so it finds the first message instead of colliding on the unique key.
    await stores.identity.lockWorkspace(actor.workspaceId);
    const earlier = await stores.messages.findByIdempotencyKey(connection.id, request.idempotencyKey);
    if (earlier) return { message: earlier, created: false };
  }

  const message = await prepareMessage(stores, deps, actor, connection, request);
  // Independent writes of one transaction, sent together (the client pipelines them).
  await Promise.all([
    stores.chats.touch(connection.id, message.remoteJid, { at: message.createdAt, fromContact: false }),
    stores.messages.insert(message),
  ]);
  // Reserved last: the credit account's row lock is then held only until the commit.
  const plan = async () => (await stores.identity.getWorkspace(actor.workspaceId))!.plan;
  await reserveCredits(stores.credits, deps, { id: actor.workspaceId, plan }, 1, `message:${message.id}`, message.reservationId!);
  return { message, created: true };
}

/** One send of a batch: who asks, and what. */
export interface BatchedSend {
  actor: Actor;
  request: SendRequest;
}

/** Every send of the batch was checked, but the credits do not cover them all in one write. */
export class BatchNotCovered extends Error {
  constructor() {
    super('the batch is not covered in one write; accept its sends one by one');
  }
}

/**
 * Accepts several sends to one connection of one workspace at once, in the caller's
 * transaction: each is checked as `acceptSend` checks it (a send that fails its checks gets its
 * own error and takes nothing), then the accepted ones are stored (queued) and their credits
 * reserved in one reservation they share, in a few writes. Under load concurrent API sends
 * arrive together; one transaction, one debit of the credit account and multi-row writes for
 * all of them take far less of the database than one of each per send. Sends with an idempotency key are not batched.
 * `connection` is the workspace's connection `connectionId` as the caller read it (`undefined`:
 * not found), in the same transaction: the caller reads it before its batch is complete.
 * Throws `BatchNotCovered` (the caller rolls back and accepts one by one) when the credits
 * cannot be taken for all of them in one conditional write.
 */
export async function acceptSendBatch(
  stores: SendStores,
  deps: SendDeps,
  workspaceId: string,
  connectionId: string,
  connection: Connection | undefined,
  sends: readonly BatchedSend[],
): Promise<Array<{ message: ChatMessage } | { error: DomainError }>> {
  const results: Array<{ message: ChatMessage } | { error: DomainError }> = [];
  const accepted: ChatMessage[] = [];
  for (const { actor, request } of sends) {
    if (actor.workspaceId !== workspaceId || request.idempotencyKey) throw new Error('a batch holds sends of one workspace without idempotency keys');
    try {
      authorize(actor.roles, 'messages.send', 'write');
      if (!connection) throw connectionNotFound(connectionId);
      const message = await prepareMessage(stores, deps, actor, connection, request);
      accepted.push(message);
      results.push({ message });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      results.push({ error });
    }
  }
  if (accepted.length === 0) return results;
  // One reservation for the batch, shared as a campaign's is: each send consumes one credit of it
  // when it goes out, and a failed one gives its one credit back (one row written per batch, not per send).
  const reservationId = deps.ids.next();
  for (const message of accepted) message.reservationId = reservationId;
  const now = deps.clock.now();
  const reason = accepted.length === 1 ? `message:${accepted[0]!.id}` : `messages:${accepted[0]!.id}+${accepted.length - 1}`;
  // The three writes go to the database together (one round trip: a batch's latency is every
  // waiting request's). The debit is issued last, so the credit account's row lock is taken
  // after the inserts and held only until the commit, as in a single send.
  const [, , covered] = await Promise.all([
    stores.messages.insertMany(accepted),
    stores.chats.touchOutgoing(connectionId, [...new Set(accepted.map((m) => m.remoteJid))], now),
    reserveBatchIfCovered(stores.credits, deps, workspaceId, accepted.length, { id: reservationId, reason }),
  ]);
  if (!covered) throw new BatchNotCovered();
  return results;
}

/** Checks a send on a known connection and builds its message (PENDING, with a new reservation id); writes nothing. */
async function prepareMessage(stores: SendStores, deps: SendDeps, actor: Actor, connection: Connection, request: SendRequest): Promise<ChatMessage> {
  // Here, not at a surface: every way of sending (v3, v2, MCP, helpdesk) is held to it alike.
  if (request.content.kind === 'template') await checkTemplateSendOn(stores.templates, deps.templateComponents, connection.id, request.content.template);
  const to = normalizeRecipient(request.to);
  const remoteJid = to.includes('@') ? to : `${to}@s.whatsapp.net`;
  const driver = deps.drivers.get(connection.driver)!;
  if (connection.status !== 'CONNECTED') {
    throw new DomainError('unprocessable', `The connection is ${connection.status}; connect it before sending`);
  }
  let { content } = request;
  if (content.kind === 'template' && !driver.capabilities.templates) {
    // Spec 4.3: "on an unofficial connection a carousel degrades to plain text"; other templates are refused.
    const { name, language } = content.template;
    const definition = await stores.templateDefinition?.(actor.workspaceId, name, language);
    const text = deps.templateComponents ? templateAsText(content.template, deps.templateComponents, definition) : null;
    if (text === null) throw new DomainError('unprocessable', 'Templates can only be sent on official connections');
    // Held to the same rules as on an official connection: against the definition when known.
    const problems = definition
      ? checkSend(definition.components, content.template.components, deps.templateComponents)
      : checkPluginComponents(content.template.components, deps.templateComponents);
    if (problems.length > 0) throw badRequest(problems);
    content = { kind: 'text', text };
  }
  if (driver.capabilities.sendWindow) {
    const chat = await stores.chats.get(connection.id, remoteJid);
    assertMaySend({ lastContactMessageAt: chat?.lastContactMessageAt ?? null }, deps.clock.now(), { isTemplate: content.kind === 'template' });
  }
  if (isMediaKind(content.kind)) {
    const source = (content as Record<string, any>)[content.kind] as { mediaId?: string };
    if (source.mediaId) await sendableMedia(stores.media, actor.workspaceId, source.mediaId, content.kind);
  }
  const replyTo = request.replyTo ? await resolveReference(stores.messages, connection.id, request.replyTo, 'replyTo') : null;
  if (content.kind === 'reaction') {
    content.reaction.messageId = await resolveReference(stores.messages, connection.id, content.reaction.messageId, 'reaction.messageId');
  }

  const id = deps.ids.next();
  const reservationId = deps.ids.next();
  const now = deps.clock.now();
  const message: ChatMessage = {
    id,
    workspaceId: actor.workspaceId,
    connectionId: connection.id,
    direction: 'outbound',
    remoteJid,
    externalId: null,
    kind: content.kind,
    content,
    status: 'PENDING',
    error: null,
    idempotencyKey: request.idempotencyKey ?? null,
    reservationId,
    replyTo,
    sentBy: actor.userId,
    messageTimestamp: now,
    createdAt: now,
    updatedAt: now,
  };
  return message;
}

/** A message of this connection by our id or the network's; answers the network id. */
async function resolveReference(messages: MessageStore, connectionId: string, reference: string, field: string): Promise<string> {
  const ours = /^[0-9a-f-]{36}$/i.test(reference) ? await messages.get(reference) : undefined;
  if (ours && ours.connectionId === connectionId) {
    if (!ours.externalId) throw badRequest(`body.${field} names a message that has not reached the network yet`);
    return ours.externalId;
  }
  const theirs = await messages.findByExternalId(connectionId, reference);
  if (!theirs) throw badRequest(`body.${field} does not name a message of this connection`);
  return reference;
}
