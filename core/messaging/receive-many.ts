import type { Connection } from '../connections/connection.ts';
import type { MediaItem } from '../media/media.ts';
import type { ReceivedMessage } from './incoming.ts';
import type { ChatMessage, ChatTouch } from './message.ts';
import { inboundMessage, MEDIA_FETCH_QUEUE, receivedEvent, type ReceiveDeps, type ReceiveOutcome, type ReceiveStores } from './receive.ts';
import type { IncomingMessageData } from './incoming.ts';

/**
 * Messages from the network that arrived together on one connection (a callback carrying many,
 * or many callbacks at once), stored as one change: what `receiveMessage` does for each, in
 * multi-row writes — the new messages in one insert, their media and media fetch jobs, each
 * chat touched once, and their events (with their places in the webhooks' fan-out and the
 * plugins' queue) in one statement, in the order they arrived. A network id the connection
 * already has, or that came twice in the batch, is a replay: stored once, published once. Each
 * message's outcome comes back in its place: the message as stored, or `stored: false`.
 *
 * An echo of our own send (`fromMe` with `clientMessageId`) may settle that send instead of
 * being stored: it goes through `receiveMessage` on its own, never here.
 */
export async function receiveMessages(
  stores: ReceiveStores,
  deps: ReceiveDeps,
  connection: Connection,
  received: readonly ReceivedMessage[],
): Promise<ReceiveOutcome[]> {
  const now = deps.clock.now();
  const seen = new Set<string>();
  const prepared = received.map((r) => {
    if (r.fromMe && r.clientMessageId) throw new Error('an echo of our own send is received on its own (receiveMessage)');
    if (seen.has(r.externalId)) return undefined;
    seen.add(r.externalId);
    return { received: r, ...inboundMessage(deps, connection, r, now) };
  });
  const candidates = prepared.filter((p) => p !== undefined);
  if (candidates.length === 0) return received.map(() => ({ stored: false }) as const);

  const inserted = new Set(await stores.messages.insertReceived(candidates.map((p) => p.message)));
  const fresh = candidates.filter((p) => inserted.has(p.received.externalId));
  if (fresh.length > 0) {
    const media = fresh.flatMap((p): MediaItem[] => (p.media ? [p.media] : []));
    // Independent writes of one transaction, sent together: a connection's batches are written
    // one at a time, so each round trip saved shortens the wait of the messages behind them.
    await Promise.all([
      stores.media.insertMany(media),
      stores.outbox.enqueueMany(MEDIA_FETCH_QUEUE, media.map((m) => ({ data: { mediaId: m.id }, dedupeKey: m.id }))),
      stores.chats.touchMany(connection.id, chatTouches(fresh)),
      stores.events.publishMany(fresh.map((p) => receivedEvent(connection, p.received, p.message.content as IncomingMessageData))),
    ]);
  }
  return prepared.map((p) => (p && inserted.has(p.received.externalId) ? { stored: true, message: p.message } : { stored: false }));
}

/**
 * Each chat once, as touching it message by message in arrival order would leave it: the latest
 * message time, the latest contact message time (the send window), and the name a contact
 * gave last.
 */
function chatTouches(messages: ReadonlyArray<{ received: ReceivedMessage; message: ChatMessage }>): ChatTouch[] {
  const chats = new Map<string, ChatTouch>();
  for (const { received, message } of messages) {
    const at = message.messageTimestamp;
    const chat = chats.get(received.remoteJid) ?? { remoteJid: received.remoteJid, at };
    if (at > chat.at) chat.at = at;
    if (!received.fromMe) {
      if (!chat.contactAt || at > chat.contactAt) chat.contactAt = at;
      if (received.pushName) chat.name = received.pushName;
    }
    chats.set(received.remoteJid, chat);
  }
  return [...chats.values()];
}
