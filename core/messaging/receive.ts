import type { Clock, IdGen } from '../shared/ports.ts';
import type { Outbox } from '../shared/outbox.ts';
import type { Connection, ConnectionEventRecord, EventPublisher } from '../connections/connection.ts';
import { downloadLink, type MediaItem, type MediaLinkDeps, type MediaStore } from '../media/media.ts';
import { applyReceipt, type DeliveryStatus } from './delivery-status.ts';
import { toMessageData, type IncomingMessageData, type ReceivedMessage } from './incoming.ts';
import type { ChatMessage, ChatStore, MessageStore } from './message.ts';
import { statusUpdateData } from './status-update.ts';
import { settleSendByEvidence, type AcceptanceDeps, type AcceptanceStores } from './settle.ts';

/** Queue of received media to fetch from the network and keep. */
export const MEDIA_FETCH_QUEUE = 'media.fetch';

export interface ReceiveStores extends AcceptanceStores {
  messages: MessageStore;
  chats: ChatStore;
  media: MediaStore;
  events: EventPublisher;
  outbox: Outbox;
}

export interface ReceiveDeps extends MediaLinkDeps, AcceptanceDeps {
  clock: Clock;
  ids: IdGen;
}

/**
 * A message from the network: stored once (a replayed delivery is recognised by its network id
 * and changes nothing), its chat updated (a contact's message reopens the send window), its
 * media registered with a signed download link, and `messages.upsert` published; a message the
 * account itself sent from the phone is published as `send.message`. Our own send echoed back
 * under the id chosen before sending (`clientMessageId`) while it is still PENDING here (the
 * worker died before recording it) settles that send instead (`settleSendByEvidence`).
 */
export async function receiveMessage(
  stores: ReceiveStores,
  deps: ReceiveDeps,
  connection: Connection,
  received: ReceivedMessage,
): Promise<ReceiveOutcome> {
  if (await stores.messages.findByExternalId(connection.id, received.externalId)) return { stored: false };
  if (received.fromMe && received.clientMessageId) {
    const evidence = { messageId: received.clientMessageId, externalId: received.externalId };
    if (await settleSendByEvidence(stores, deps, connection, evidence)) return { stored: false };
  }
  const { message, media } = inboundMessage(deps, connection, received, deps.clock.now());
  if (media) {
    await stores.media.insert(media);
    await stores.outbox.enqueue(MEDIA_FETCH_QUEUE, { mediaId: media.id }, { dedupeKey: media.id });
  }
  // Lost a race with a concurrent delivery of the same message: the other one publishes.
  if (!(await stores.messages.insert(message))) throw new ReplayedMessage();

  const at = message.messageTimestamp;
  await stores.chats.touch(connection.id, received.remoteJid, {
    at,
    name: received.fromMe ? undefined : received.pushName || undefined,
    fromContact: !received.fromMe,
  });
  await stores.events.publish(receivedEvent(connection, received, message.content as IncomingMessageData));
  return { stored: true, message };
}

/** A received message as stored, or `stored: false` for a replay (or one that settled our own send). */
export type ReceiveOutcome = { stored: false } | { stored: true; message: ChatMessage };

/**
 * What a received message stores: its row (`content` is the 2.13 data) and, when it carries
 * media, the media item its signed `downloadMediaUrl` names. Writes nothing.
 */
export function inboundMessage(deps: ReceiveDeps, connection: Connection, received: ReceivedMessage, now: Date): { message: ChatMessage; media?: MediaItem } {
  let media: MediaItem | undefined;
  if (received.media) {
    media = {
      id: deps.ids.next(),
      workspaceId: connection.workspaceId,
      connectionId: connection.id,
      origin: 'received',
      driverRef: received.media.ref,
      mimetype: received.media.mimetype,
      fileName: received.media.fileName ?? null,
      size: null,
      createdAt: now,
    };
  }
  const data = toMessageData(received, { downloadMediaUrl: media && downloadLink(deps, media.id) });
  const message: ChatMessage = {
    id: deps.ids.next(),
    workspaceId: connection.workspaceId,
    connectionId: connection.id,
    direction: received.fromMe ? 'outbound' : 'inbound',
    remoteJid: received.remoteJid,
    externalId: received.externalId,
    kind: received.messageType,
    content: data,
    status: received.fromMe ? 'SENT' : 'RECEIVED',
    error: null,
    idempotencyKey: null,
    reservationId: null,
    replyTo: received.contextInfo?.stanzaId ?? null,
    sentBy: null,
    messageTimestamp: new Date(Math.floor(received.timestamp) * 1000),
    createdAt: now,
    updatedAt: now,
  };
  return { message, media };
}

/** `messages.upsert` for a contact's message; `send.message` for one the account sent from the phone. */
export function receivedEvent(connection: Connection, received: ReceivedMessage, data: IncomingMessageData): ConnectionEventRecord {
  return {
    event: received.fromMe ? 'send.message' : 'messages.upsert',
    workspaceId: connection.workspaceId,
    connectionId: connection.id,
    remoteJid: received.remoteJid,
    sender: connection.phoneNumber,
    data,
  };
}

/** Thrown (and rolled back) when a concurrent delivery stored the same message first. */
export class ReplayedMessage extends Error {
  constructor() {
    super('message already stored');
  }
}

/**
 * A delivery receipt: the message's status moves forward only (stale receipts change nothing)
 * and `messages.update` tells it in the one shape of every driver (status-update.ts). A receipt
 * naming our message id (`clientMessageId`) for a network id we never recorded first settles
 * that send by the network's evidence (`settleSendByEvidence`), then applies as usual.
 */
export async function receiveReceipt(
  stores: ReceiveStores,
  deps: Pick<ReceiveDeps, 'clock' | 'drivers'>,
  connection: Connection,
  receipt: { externalId: string; remoteJid: string; status: DeliveryStatus; error?: { code: number | string; title: string }; clientMessageId?: string },
): Promise<void> {
  // Before the network id's lock: the message row is locked first, in the order `recordSent` takes them.
  if (receipt.clientMessageId) await settleSendByEvidence(stores, deps, connection, { messageId: receipt.clientMessageId, externalId: receipt.externalId });
  // Without the lock, a receipt racing the send's commit could be held after the send took the
  // held receipts, and be lost (READ COMMITTED: neither sees the other's uncommitted row).
  await stores.messages.lockNetworkId(connection.id, receipt.externalId);
  const message = await stores.messages.findByExternalId(connection.id, receipt.externalId);
  if (!message) await stores.messages.holdReceipt(connection.id, receipt.externalId, { status: receipt.status, error: receipt.error ?? null });
  if (message && message.direction === 'outbound' && message.status !== 'RECEIVED') {
    const status = applyReceipt(message.status, receipt.status);
    if (status !== message.status) {
      await stores.messages.update({ ...message, status, error: status === 'FAILED' ? receipt.error ?? null : message.error, updatedAt: deps.clock.now() });
    }
  }
  await stores.events.publish({
    event: 'messages.update',
    workspaceId: connection.workspaceId,
    connectionId: connection.id,
    remoteJid: receipt.remoteJid,
    sender: connection.phoneNumber,
    data: statusUpdateData({ messageId: receipt.externalId, remoteJid: receipt.remoteJid || message?.remoteJid || '', status: receipt.status, at: deps.clock.now(), error: receipt.error }),
  });
}

/** Presence, edits and deletions: the provider's data passes through (spec 6.1). */
export async function receivePassthrough(
  stores: Pick<ReceiveStores, 'events'>,
  connection: Connection,
  event: 'presence.update' | 'messages.edited' | 'messages.delete',
  remoteJid: string,
  data: unknown,
): Promise<void> {
  await stores.events.publish({ event, workspaceId: connection.workspaceId, connectionId: connection.id, remoteJid, sender: connection.phoneNumber, data });
}
