import { consumeCredits, releaseCredits } from '../plans/metering.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import type { Connection, EventPublisher } from '../connections/connection.ts';
import { DriverError, SESSION_ELSEWHERE, type OutgoingMedia } from '../connections/driver.ts';
import { applyReceipt, type DeliveryStatus } from './delivery-status.ts';
import { toMessageData } from './incoming.ts';
import type { ChatMessage } from './message.ts';
import { isMediaKind, type OutgoingContent, type OutgoingMessage } from './outgoing.ts';
import { SEND_QUEUE, type SendDeps, type SendStores } from './send.ts';

export type DeliverStores = SendStores & { events: EventPublisher };

/** How many times a send may be handed to another worker looking for its session (about a minute). */
const MAX_HOPS = 60;

/**
 * The worker's half of a send: hands a PENDING message to its driver, then records the outcome.
 * The network call happens outside any transaction. A retryable failure is thrown back to the
 * queue until the last attempt; a permanent one (or the last attempt) marks the message FAILED
 * and refunds its credit. Credit policy: a message consumes its credit once the network has
 * accepted it; a message that never went out costs nothing.
 */
export async function deliverMessage(
  uow: UnitOfWork<DeliverStores>,
  deps: SendDeps,
  messageId: string,
  attempt: { retryCount: number; retryLimit: number; hops?: number },
): Promise<void> {
  const prepared = await uow.transaction(async (stores) => {
    const message = await stores.messages.get(messageId);
    if (!message || message.status !== 'PENDING') return undefined;
    const connection = await stores.connections.find(message.connectionId);
    return { message, connection, media: connection && (await mediaFor(stores, message.content as OutgoingContent)) };
  });
  if (!prepared) return;
  const { message, connection } = prepared;
  if (!connection) return fail(uow, deps, message, { code: 'connection_deleted', title: 'The connection was deleted before the message went out' });

  const driver = deps.drivers.get(connection.driver)!;
  const outgoing: OutgoingMessage = {
    to: message.remoteJid,
    content: message.content as OutgoingContent,
    replyToExternalId: message.replyTo ?? undefined,
    clientMessageId: message.id,
  };
  let result;
  try {
    result = await driver.send(driverView(connection), outgoing, prepared.media);
  } catch (error) {
    if (error instanceof DriverError && error.code === SESSION_ELSEWHERE && (attempt.hops ?? 0) < MAX_HOPS) {
      // Only the worker holding the session can send: hand the job on until one of them takes it.
      const hops = (attempt.hops ?? 0) + 1;
      await uow.transaction((stores) => stores.outbox.enqueue(SEND_QUEUE, { messageId, hops }, { dedupeKey: `${messageId}:hop:${hops}`, startAfterSeconds: 1 }));
      return;
    }
    const retryable = error instanceof DriverError ? error.retryable : true;
    if (retryable && attempt.retryCount < attempt.retryLimit) throw error;
    const code = error instanceof DriverError ? error.code : 'send_failed';
    return fail(uow, deps, message, { code, title: error instanceof Error ? error.message : String(error) });
  }

  await uow.transaction(async (stores) => {
    const current = await stores.messages.lock(message.id);
    if (!current || current.status !== 'PENDING') return;
    let sent: ChatMessage = {
      ...current,
      externalId: result.externalId,
      status: applyReceipt('PENDING', result.status ?? 'SENT'),
      updatedAt: deps.clock.now(),
    };
    // Receipts that overtook this write (the network called back before we stored its id); the
    // lock makes a receipt arriving meanwhile wait for this commit, then find the message.
    await stores.messages.lockNetworkId(current.connectionId, result.externalId);
    for (const held of await stores.messages.takeHeldReceipts(current.connectionId, result.externalId)) {
      const status = applyReceipt(sent.status as DeliveryStatus, held.status);
      sent = { ...sent, status, error: status === 'FAILED' ? held.error : sent.error };
    }
    await stores.messages.update(sent);
    if (current.reservationId) await consumeCredits(stores.credits, current.reservationId, 1);
    if (!driver.capabilities.official) {
      // spec 6.1: `send.message` fires on unofficial connections when a message went out.
      await stores.events.publish({
        event: 'send.message',
        workspaceId: sent.workspaceId,
        connectionId: sent.connectionId,
        remoteJid: sent.remoteJid,
        sender: connection.phoneNumber,
        data: outboundData(sent),
      });
    }
  });
}

async function fail(uow: UnitOfWork<DeliverStores>, deps: Pick<SendDeps, 'clock'>, message: ChatMessage, error: { code: number | string; title: string }): Promise<void> {
  await uow.transaction(async (stores) => {
    const current = await stores.messages.lock(message.id);
    if (!current || current.status !== 'PENDING') return;
    await stores.messages.update({ ...current, status: 'FAILED', error, updatedAt: deps.clock.now() });
    // Its one credit goes back; a campaign's reservation keeps the others' (the rest stay reserved).
    if (current.reservationId) await releaseCredits(stores.credits, current.reservationId, 1);
    const connection = await stores.connections.find(current.connectionId);
    await stores.events.publish({
      event: 'messages.update',
      workspaceId: current.workspaceId,
      connectionId: connection ? current.connectionId : '',
      remoteJid: current.remoteJid,
      sender: connection?.phoneNumber ?? null,
      data: { statuses: [{ id: current.id, status: 'failed', recipient_id: current.remoteJid, errors: [error] }] },
    });
  });
}

/** What a driver needs of a connection. */
export function driverView(connection: Connection) {
  return { id: connection.id, workspaceId: connection.workspaceId, credentials: connection.credentials, phoneNumber: connection.phoneNumber };
}

async function mediaFor(stores: SendStores, content: OutgoingContent): Promise<OutgoingMedia | undefined> {
  if (!isMediaKind(content.kind)) return undefined;
  const source = (content as Record<string, any>)[content.kind] as { url?: string; mediaId?: string; mimetype?: string; fileName?: string };
  if (source.url) return { url: source.url, mimetype: source.mimetype ?? guessMimetype(content.kind), fileName: source.fileName };
  const item = await stores.media.get(source.mediaId!);
  const bytes = item && (await stores.media.bytes(item.id));
  if (!item || !bytes) throw new DriverError(`Media ${source.mediaId} is no longer available`, 'media_missing', false);
  return { bytes, mimetype: item.mimetype, fileName: source.fileName ?? item.fileName ?? undefined };
}

function guessMimetype(kind: string): string {
  return { image: 'image/jpeg', video: 'video/mp4', audio: 'audio/ogg', sticker: 'image/webp', document: 'application/octet-stream' }[kind] ?? 'application/octet-stream';
}

const MESSAGE_TYPE_OF_KIND: Record<string, string> = {
  text: 'conversation',
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
  document: 'documentMessage',
  sticker: 'stickerMessage',
  location: 'locationMessage',
  contacts: 'contactsArrayMessage',
  reaction: 'reactionMessage',
};

/** An outgoing message in the closed 2.13 shape, for `send.message`. */
export function outboundData(message: ChatMessage) {
  const content = message.content as Record<string, any>;
  const messageType = MESSAGE_TYPE_OF_KIND[message.kind] ?? `${message.kind}Message`;
  return toMessageData(
    {
      externalId: message.externalId ?? message.id,
      remoteJid: message.remoteJid,
      fromMe: true,
      pushName: '',
      messageType,
      node: message.kind === 'text' ? {} : { ...(content[message.kind] ?? {}) },
      text: message.kind === 'text' ? content.text : undefined,
      timestamp: Math.floor(message.messageTimestamp.getTime() / 1000),
      source: 'unknown',
      isAiMessage: false,
      contextInfo: message.replyTo ? { stanzaId: message.replyTo } : undefined,
    },
    { status: 'SERVER_ACK' },
  );
}
