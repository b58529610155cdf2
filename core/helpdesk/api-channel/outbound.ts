import { unprocessable } from '../../shared/errors.ts';
import type { UnitOfWork } from '../../shared/unit-of-work.ts';
import { afterAttempt, mayAttempt, REQUEST_TIMEOUT_MS, type AttemptOutcome, type DeliveryProgress, type DeliveryState } from '../../webhooks/delivery.ts';
import { MAX_SOURCE_ID_LENGTH, SIGNATURE_HEADER, signApiChannelBody, type ApiChannelStores } from './inbound.ts';
import type { Conversation, ConversationDeps, HelpdeskMessage } from '../conversations/conversations.ts';
import { messageStatusChanged } from '../events.ts';
import type { Inbox } from '../inboxes/inboxes.ts';
import { withAttachments } from '../conversations/attachments.ts';
import { applyDeliveryOutcome, type MessageDeliveryChange, type MessageDeliveryState } from '../conversations/message-status.ts';

/**
 * The API channel, outbound side (spec 6.6): a reply on an API inbox is stored `PENDING` and
 * answered at once; a job queued in the same transaction POSTs it to `channelConfig.webhookUrl`:
 *
 *   { event: "message.created", data: { sourceId, recipientIdentifier, content, attachments: [] }, deliveredAt }
 *
 * signed `x-helpdesk-signature: <hex HMAC-SHA256 of the raw body keyed with the inbox's secret>`.
 * `data.sourceId` is the reply's own id (the app deduplicates on it: a retried POST carries the
 * same one). The POST is attempted as a webhook delivery is (core/webhooks/delivery.ts: success
 * below 400, 3 attempts, 5 s then 10 s apart, 10 s timeout). Success moves the reply to SENT and,
 * when the answer is `{ sourceId: <the app's id> }`, remembers that id for later status updates;
 * the last failed attempt moves it to FAILED with `externalError` naming what the endpoint did.
 */
export const API_CHANNEL_DELIVER_QUEUE = 'helpdesk.api-channel.deliver';
export const API_CHANNEL_EVENT = 'message.created';
/** A longer answer is not read for `{ sourceId }` (an app answering with a page is not saying that). */
export const MAX_ANSWER_LENGTH = 64 * 1024;

/** Sends one request; never throws (a failure is an outcome); `answer` is the body of the answer. */
export interface ApiChannelSender {
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<AttemptOutcome & { durationMs: number; answer?: string }>;
}

export interface ApiReply {
  inbox: Inbox;
  recipientIdentifier: string;
}

/**
 * Before a reply on an API inbox is stored: without a `webhookUrl` there is nowhere to send it,
 * so it is refused (422) rather than left PENDING forever. The recipient is the identifier the
 * app gave for the contact (`sender.identifier`, else their email), else the contact's email or phone.
 */
export async function prepareApiReply(stores: ApiChannelStores, inbox: Inbox, conversation: Conversation): Promise<ApiReply> {
  if (!inbox.webhookUrl) throw unprocessable('This API inbox has no webhookUrl to send replies to: set channelConfig.webhookUrl (PATCH /v3/helpdesk/inboxes/{id} with webhookUrl)');
  const remembered = await stores.apiChannel.identifierOf(inbox.id, conversation.contactId);
  const contact = remembered === undefined ? await stores.contacts.get(conversation.workspaceId, conversation.contactId) : undefined;
  return { inbox, recipientIdentifier: remembered ?? contact?.email ?? contact?.phone ?? conversation.contactId };
}

/** In the reply's transaction: its delivery, and the job that makes the first attempt (idempotent on the message id). */
export async function queueApiReply(stores: ApiChannelStores, reply: ApiReply, message: HelpdeskMessage): Promise<void> {
  await stores.apiChannel.insert({
    messageId: message.id,
    inboxId: reply.inbox.id,
    workspaceId: message.workspaceId,
    conversationId: message.conversationId,
    direction: 'outgoing',
    sourceId: null,
    recipientIdentifier: reply.recipientIdentifier,
    delivery: { state: 'PENDING', attempts: 0 },
    lastOutcome: null,
    createdAt: message.createdAt,
    updatedAt: message.createdAt,
  });
  await stores.outbox.enqueue(API_CHANNEL_DELIVER_QUEUE, { messageId: message.id }, { dedupeKey: `${message.id}:0`, group: reply.inbox.id });
}

/** The exact body of a POST to the app; each file of the reply as in REST, with a fresh signed download link. */
export function apiChannelBody(message: Pick<HelpdeskMessage, 'id' | 'content' | 'attachments'>, recipientIdentifier: string, deliveredAt: Date): string {
  const attachments = (message.attachments ?? []).map((a) => ({ id: a.id, fileName: a.fileName, mimeType: a.mimeType, size: a.size, downloadUrl: a.downloadUrl }));
  return JSON.stringify({
    event: API_CHANNEL_EVENT,
    data: { sourceId: message.id, recipientIdentifier, content: message.content, attachments },
    deliveredAt: deliveredAt.toISOString(),
  });
}

export function describeOutcome(outcome: AttemptOutcome): string {
  return 'status' in outcome ? `HTTP ${outcome.status}` : outcome.error;
}

/** The app's own id for the message, if its answer is a JSON object `{ sourceId: <string or integer> }`. */
export function sourceIdOfAnswer(answer: string | undefined): string | null {
  if (!answer || answer.length > MAX_ANSWER_LENGTH) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const value = (parsed as { sourceId?: unknown }).sourceId;
  const id = typeof value === 'string' ? value.trim() : Number.isSafeInteger(value) ? String(value) : '';
  return id.length > 0 && id.length <= MAX_SOURCE_ID_LENGTH ? id : null;
}

export interface ApiAttemptResult {
  progress: DeliveryProgress;
  retryInSeconds: number | null;
  /** The reply after the attempt: SENT on success, FAILED when the attempts are used up. */
  message: MessageDeliveryChange;
  /** The id the app answered, on success. */
  appSourceId: string | null;
  outcome: string;
}

/** What one attempt does to the delivery and to the reply's status (no IO: the job applies it). */
export function settleApiAttempt(progress: DeliveryProgress, message: MessageDeliveryState, outcome: AttemptOutcome, answer?: string): ApiAttemptResult {
  const next = afterAttempt(progress, outcome);
  const described = describeOutcome(outcome);
  let change: MessageDeliveryChange = { ...message, changed: false };
  if (next.progress.state === 'SUCCEEDED') change = applyDeliveryOutcome(message, { status: 'SENT' });
  if (next.progress.state === 'FAILED') {
    change = applyDeliveryOutcome(message, { status: 'FAILED', externalError: `The webhookUrl did not take the message after ${next.progress.attempts} attempts (last: ${described})` });
  }
  return {
    progress: next.progress,
    retryInSeconds: next.retryInSeconds,
    message: change,
    appSourceId: next.progress.state === 'SUCCEEDED' ? sourceIdOfAnswer(answer) : null,
    outcome: described,
  };
}

/**
 * One attempt of a reply's delivery (the job): the request outside any transaction, then its
 * outcome applied under the delivery's lock; a concurrent attempt that already counted wins.
 */
export async function attemptApiDelivery(
  uow: UnitOfWork<ApiChannelStores>,
  deps: ConversationDeps,
  sender: ApiChannelSender,
  messageId: string,
): Promise<DeliveryState | undefined> {
  const prepared = await uow.transaction(async (stores) => {
    const delivery = await stores.apiChannel.lockOutgoing(messageId);
    if (!delivery?.delivery || !mayAttempt(delivery.delivery)) return undefined;
    const stored = await stores.messages.get(delivery.conversationId, delivery.messageId);
    const inbox = await stores.inboxes.get(delivery.workspaceId, delivery.inboxId);
    const message = stored && (await withAttachments(stores, [stored]))[0];
    return message && inbox && { delivery, progress: delivery.delivery, message, inbox };
  });
  if (!prepared) return undefined;
  const { delivery, progress, message, inbox } = prepared;

  let outcome: AttemptOutcome & { answer?: string };
  if (!inbox.webhookUrl || !inbox.inboundSecret) {
    // Removed since the reply was accepted: a failed attempt, so setting it again in time still delivers.
    outcome = { error: 'the inbox has no webhookUrl' };
  } else {
    const body = apiChannelBody(message, delivery.recipientIdentifier ?? '', deps.clock.now());
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Switchboard-Helpdesk/1',
      'x-helpdesk-event': API_CHANNEL_EVENT,
      [SIGNATURE_HEADER]: signApiChannelBody(inbox.inboundSecret, body),
    };
    outcome = await sender.post(inbox.webhookUrl, body, headers, REQUEST_TIMEOUT_MS);
  }

  return uow.transaction(async (stores) => {
    const current = await stores.apiChannel.lockOutgoing(messageId);
    if (!current?.delivery || !mayAttempt(current.delivery) || current.delivery.attempts !== progress.attempts) return current?.delivery?.state;
    const reply = await stores.messages.get(current.conversationId, current.messageId);
    const conversation = await stores.conversations.get(current.workspaceId, current.conversationId);
    if (!reply || reply.status === null || !conversation) return undefined;
    const result = settleApiAttempt(current.delivery, { status: reply.status, externalError: reply.externalError }, outcome, outcome.answer);
    let sourceId = current.sourceId;
    if (result.appSourceId !== null) {
      // The app's ids name one message of the inbox: an id it already gave another one is not taken.
      await stores.apiChannel.serialize(`helpdesk-api:${current.inboxId}:app-source:${result.appSourceId}`);
      const holder = await stores.apiChannel.findOutgoing(current.inboxId, result.appSourceId);
      if (!holder || holder.messageId === current.messageId) sourceId = result.appSourceId;
    }
    const now = deps.clock.now();
    await stores.apiChannel.update({ ...current, sourceId, delivery: result.progress, lastOutcome: result.outcome, updatedAt: now });
    if (result.message.changed) {
      const updated: HelpdeskMessage = { ...reply, status: result.message.status, externalError: result.message.externalError };
      await stores.messages.update(updated);
      await stores.events.record(messageStatusChanged(conversation, updated, reply.status));
    }
    if (result.retryInSeconds !== null) {
      // Keyed on the attempt: a crashed settle that runs again queues the same retry once.
      await stores.outbox.enqueue(
        API_CHANNEL_DELIVER_QUEUE,
        { messageId },
        { startAfterSeconds: result.retryInSeconds, dedupeKey: `${messageId}:${result.progress.attempts}`, group: current.inboxId },
      );
    }
    return result.progress.state;
  });
}
