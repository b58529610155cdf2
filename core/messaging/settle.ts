import { consumeCreditsEach, type CreditStore } from '../plans/metering.ts';
import type { Clock } from '../shared/ports.ts';
import type { Connection, ConnectionEventRecord, EventPublisher } from '../connections/connection.ts';
import type { NetworkDriver, SendResult } from '../connections/driver.ts';
import { applyReceipt, type DeliveryStatus } from './delivery-status.ts';
import type { ChatMessage, MessageStore } from './message.ts';
import { outboundData } from './outbound-data.ts';
import { statusUpdateData } from './status-update.ts';
import { IN_DOUBT_ERROR } from './send-record.ts';

export interface AcceptanceStores {
  messages: MessageStore;
  credits: CreditStore;
  events: EventPublisher;
}

export interface AcceptanceDeps {
  clock: Clock;
  drivers: ReadonlyMap<string, Pick<NetworkDriver, 'capabilities'>>;
}

/** A send the network took: the message as locked (still PENDING), its connection, what the network answered. */
export interface AcceptedSend {
  message: ChatMessage;
  connection: Connection;
  result: SendResult;
}

/**
 * Records sends the network took, whoever learnt it (the worker's own answer from the network,
 * or the network's later evidence, see `settleSendByEvidence`): each message gets its network
 * id and status (with any receipts that overtook it), its credit is consumed, and on unofficial
 * connections `send.message` and `messages.update` are published. The caller holds the row
 * locks of these messages and found them PENDING: that is what makes it happen once.
 */
export async function recordAccepted(stores: AcceptanceStores, deps: AcceptanceDeps, accepted: readonly AcceptedSend[]): Promise<void> {
  if (accepted.length === 0) return;
  // Receipts that overtook these writes (the network called back before we stored its id);
  // the locks make a receipt arriving meanwhile wait for this commit, then find the message.
  const networkIds = accepted.map((s) => ({ connectionId: s.message.connectionId, externalId: s.result.externalId }));
  await stores.messages.lockNetworkIds(networkIds);
  const held = await stores.messages.takeHeldReceipts(networkIds);
  const now = deps.clock.now();
  const updated = accepted.map(({ message, result }) => {
    let next: ChatMessage = { ...message, externalId: result.externalId, status: applyReceipt('PENDING', result.status ?? 'SENT'), updatedAt: now };
    for (const receipt of held.filter((h) => h.connectionId === message.connectionId && h.externalId === result.externalId)) {
      const status = applyReceipt(next.status as DeliveryStatus, receipt.status);
      next = { ...next, status, error: status === 'FAILED' ? receipt.error : next.error };
    }
    return next;
  });
  await stores.messages.recordSent(updated);
  await consumeCreditsEach(stores.credits, updated.flatMap((m) => (m.reservationId ? [m.reservationId] : [])));
  // Spec 6.1: `send.message` fires on unofficial connections when a message went out, and
  // `messages.update` when its status changed ("sent, delivered, read"). Official networks
  // report `sent` themselves (a `statuses[]` callback, published as a receipt): not twice.
  const events: ConnectionEventRecord[] = updated.flatMap((m, i) => {
    const { connection, result } = accepted[i]!;
    if (deps.drivers.get(connection.driver)?.capabilities.official) return [];
    const event = { workspaceId: m.workspaceId, connectionId: m.connectionId, remoteJid: m.remoteJid, sender: connection.phoneNumber };
    const status = applyReceipt('PENDING', result.status ?? 'SENT');
    return [
      { ...event, event: 'send.message', data: outboundData(m) },
      { ...event, event: 'messages.update', data: statusUpdateData({ messageId: m.externalId!, remoteJid: m.remoteJid, status, at: now }) },
    ];
  });
  await stores.events.publishMany(events);
}

/**
 * The network's own evidence that it took a send we never recorded: a status callback naming a
 * network id we do not know and carrying our message id (the Cloud API hands back the send's
 * `biz_opaque_callback_data`), or our own message echoed back under the id we chose before
 * sending (Baileys, after a reconnect). This happens when the worker died between the network
 * call and the write of its answer: the send is in doubt, and its retry would send it again.
 *
 * When `messageId` names a PENDING outbound message of this very connection (or one given up in
 * doubt, FAILED `send_in_doubt`: the evidence came late), the message is
 * settled exactly as the worker would have recorded it (`recordAccepted`, status SENT: the
 * receipt that brought the evidence is applied after, by the normal receipt path), so the retry
 * finds it no longer PENDING and sends nothing. Evidence naming a message of another
 * connection or workspace, a settled message, or no message of ours changes nothing. The
 * message row is locked first (as `recordSent` does): of this and the worker's own record,
 * whoever finds it still PENDING records it, once. Answers whether this call settled it.
 */
export async function settleSendByEvidence(
  stores: AcceptanceStores,
  deps: AcceptanceDeps,
  connection: Connection,
  evidence: { messageId: string; externalId: string },
): Promise<boolean> {
  const message = await stores.messages.lock(evidence.messageId);
  if (!message || message.connectionId !== connection.id || message.workspaceId !== connection.workspaceId) return false;
  if (message.direction !== 'outbound') return false;
  const givenUp = message.status === 'FAILED' && message.error?.code === IN_DOUBT_ERROR.code;
  if (message.status !== 'PENDING' && !givenUp) return false;
  // A network id already recorded belongs to its message: evidence never moves it to another.
  if (await stores.messages.findByExternalId(connection.id, evidence.externalId)) return false;
  // Evidence after the send was given up in doubt: it did go out. Its credit went back when it
  // was given up and is not taken again.
  const settling = givenUp ? { ...message, status: 'PENDING' as const, error: null, reservationId: null } : message;
  await recordAccepted(stores, deps, [{ message: settling, connection, result: { externalId: evidence.externalId, status: 'SENT' } }]);
  return true;
}
