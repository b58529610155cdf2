import { releaseCredits } from '../plans/metering.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import type { Connection, EventPublisher } from '../connections/connection.ts';
import { DriverError, SESSION_ELSEWHERE, type OutgoingMedia, type SendResult } from '../connections/driver.ts';
import type { ChatMessage } from './message.ts';
import { statusUpdateData } from './status-update.ts';
import { isMediaKind, type OutgoingContent, type OutgoingMessage } from './outgoing.ts';
import { assertMediaFits } from '../media/media-limits.ts';
import { recordAccepted } from './settle.ts';
import { SEND_QUEUE, type SendDeps, type SendStores } from './send.ts';

export type DeliverStores = SendStores & { events: EventPublisher };

/** How many times a send may be handed to another worker looking for its session (about a minute). */
const MAX_HOPS = 60;

/** One queued driver send: its message and where its job stands in the queue's retries. */
export interface SendAttempt {
  messageId: string;
  retryCount: number;
  retryLimit: number;
  /** Times the send was handed on by workers that do not hold the session. */
  hops?: number;
}

/**
 * The worker's half of sends: hands PENDING messages to their drivers, then records the
 * outcomes. Network calls happen outside any transaction, side by side. Sends the network took
 * are recorded together in one transaction (their statuses, held receipts, credits and
 * `send.message` events in a few multi-row writes), which is what lets one worker keep up with
 * a connection's accepted sends. A retryable failure is answered as that send's error (the
 * queue retries its job) until the last attempt; a permanent one (or the last attempt) marks the
 * message FAILED and refunds its credit. Credit policy: a message consumes its credit once the
 * network has accepted it; a message that never went out costs nothing.
 * Answers, per attempt in order, the error its job should fail with, or undefined when done.
 */
export async function deliverMessages(uow: UnitOfWork<DeliverStores>, deps: SendDeps, attempts: readonly SendAttempt[]): Promise<Array<Error | undefined>> {
  const prepared = await uow.transaction((stores) => prepareSends(stores, attempts));
  const outcomes = await sendByChat(deps, prepared);

  const sent = prepared.flatMap((send, i) => (send && outcomes[i]?.kind === 'sent' ? [{ ...send, result: outcomes[i].result, index: i }] : []));
  const errors: Array<Error | undefined> = attempts.map(() => undefined);
  await recordSent(uow, deps, sent).catch(async () => {
    // One of them could not be written with the others (a deadlock, a constraint): each alone,
    // so one bad write fails (and retries) only its own job.
    for (const one of sent) await recordSent(uow, deps, [one]).catch((error: Error) => (errors[one.index] = error));
  });

  const hops: Array<SendAttempt & { index: number }> = [];
  for (const [i, outcome] of outcomes.entries()) {
    const message = prepared[i]?.message;
    if (!outcome || !message) continue;
    if (outcome.kind === 'hop') hops.push({ ...attempts[i]!, hops: (attempts[i]!.hops ?? 0) + 1, index: i });
    if (outcome.kind === 'failed') {
      const retryable = outcome.error instanceof DriverError ? outcome.error.retryable : true;
      if (retryable && attempts[i]!.retryCount < attempts[i]!.retryLimit) errors[i] = outcome.error;
      else await fail(uow, deps, message, failure(outcome.error)).catch((error: Error) => (errors[i] = error));
    }
  }
  if (hops.length > 0) {
    // Only the worker holding the session can send: hand the jobs on until one of them takes them.
    await uow
      .transaction(async (stores) => {
        for (const hop of hops) await stores.outbox.enqueue(SEND_QUEUE, { messageId: hop.messageId, hops: hop.hops }, { dedupeKey: `${hop.messageId}:hop:${hop.hops}`, startAfterSeconds: 1 });
      })
      .catch((error: Error) => {
        for (const hop of hops) errors[hop.index] = error;
      });
  }
  return errors;
}

/** What a driver needs of a connection. */
export function driverView(connection: Connection) {
  return { id: connection.id, workspaceId: connection.workspaceId, credentials: connection.credentials, phoneNumber: connection.phoneNumber };
}

/** A send ready for its driver: the PENDING message, its connection and its media (or why it cannot go). */
interface PreparedSend {
  attempt: SendAttempt;
  message: ChatMessage;
  connection: Connection | undefined;
  media: OutgoingMedia | undefined;
  mediaError?: Error;
}

type SendOutcome = { kind: 'sent'; result: SendResult } | { kind: 'hop' } | { kind: 'failed'; error: Error };

/** The PENDING messages of these attempts with their connections (each read once); others are done already. */
async function prepareSends(stores: DeliverStores, attempts: readonly SendAttempt[]): Promise<Array<PreparedSend | undefined>> {
  const messages = new Map((await stores.messages.getMany(attempts.map((a) => a.messageId))).map((m) => [m.id, m]));
  const connections = new Map<string, Connection | undefined>();
  const prepared: Array<PreparedSend | undefined> = [];
  for (const attempt of attempts) {
    const message = messages.get(attempt.messageId);
    // A job run again (a retry after its worker died, a duplicate hop) for a message already
    // settled, or a second job of a message in this batch: done, nothing to send.
    messages.delete(attempt.messageId);
    if (!message || message.status !== 'PENDING') {
      prepared.push(undefined);
      continue;
    }
    if (!connections.has(message.connectionId)) connections.set(message.connectionId, await stores.connections.find(message.connectionId));
    const connection = connections.get(message.connectionId);
    const media = connection && (await mediaFor(stores, message.content as OutgoingContent).then((m) => ({ media: m }), (error: Error) => ({ media: undefined, error })));
    prepared.push({ attempt, message, connection, media: media?.media, mediaError: media && 'error' in media ? media.error : undefined });
  }
  return prepared;
}

/**
 * Sends side by side, except that the messages of one chat go one after another, oldest first
 * (ids are UUID v7): a contact receives a burst of messages in the order they were accepted.
 */
async function sendByChat(deps: SendDeps, prepared: ReadonlyArray<PreparedSend | undefined>): Promise<Array<SendOutcome | undefined>> {
  const outcomes: Array<SendOutcome | undefined> = prepared.map(() => undefined);
  const chats = new Map<string, number[]>();
  for (const [i, send] of prepared.entries()) {
    if (!send) continue;
    const chat = `${send.message.connectionId}|${send.message.remoteJid}`;
    chats.set(chat, [...(chats.get(chat) ?? []), i]);
  }
  await Promise.all(
    [...chats.values()].map(async (indexes) => {
      for (const i of indexes.sort((a, b) => (prepared[a]!.message.id < prepared[b]!.message.id ? -1 : 1))) outcomes[i] = await sendOne(deps, prepared[i]!);
    }),
  );
  return outcomes;
}

async function sendOne(deps: SendDeps, { message, connection, media, mediaError, attempt }: PreparedSend): Promise<SendOutcome> {
  if (!connection) return { kind: 'failed', error: new DriverError('The connection was deleted before the message went out', 'connection_deleted', false) };
  if (mediaError) return { kind: 'failed', error: mediaError };
  const outgoing: OutgoingMessage = {
    to: message.remoteJid,
    content: message.content as OutgoingContent,
    replyToExternalId: message.replyTo ?? undefined,
    clientMessageId: message.id,
  };
  try {
    return { kind: 'sent', result: await deps.drivers.get(connection.driver)!.send(driverView(connection), outgoing, media) };
  } catch (error) {
    if (error instanceof DriverError && error.code === SESSION_ELSEWHERE && (attempt.hops ?? 0) < MAX_HOPS) return { kind: 'hop' };
    return { kind: 'failed', error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/**
 * Records sends the network took, in one transaction (`recordAccepted`). Messages settled
 * meanwhile (by the network's evidence, or a job run twice) are left as they are: the row locks
 * make this and `settleSendByEvidence` take turns, and only the one finding PENDING records.
 */
async function recordSent(uow: UnitOfWork<DeliverStores>, deps: SendDeps, sent: ReadonlyArray<PreparedSend & { result: SendResult }>): Promise<void> {
  if (sent.length === 0) return;
  await uow.transaction(async (stores) => {
    const current = new Map((await stores.messages.lockMany(sent.map((s) => s.message.id))).map((m) => [m.id, m]));
    const pending = sent.filter((s) => current.get(s.message.id)?.status === 'PENDING');
    await recordAccepted(stores, deps, pending.map((s) => ({ message: current.get(s.message.id)!, connection: s.connection!, result: s.result })));
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
      // Never reached the network: no network id, so the service's own id names it.
      data: statusUpdateData({ messageId: current.id, remoteJid: current.remoteJid, status: 'FAILED', at: deps.clock.now(), error }),
    });
  });
}

function failure(error: Error): { code: number | string; title: string } {
  return { code: error instanceof DriverError ? error.code : 'send_failed', title: error.message };
}

async function mediaFor(stores: SendStores, content: OutgoingContent): Promise<OutgoingMedia | undefined> {
  if (!isMediaKind(content.kind)) return undefined;
  const source = (content as Record<string, any>)[content.kind] as { url?: string; mediaId?: string; mimetype?: string; fileName?: string };
  if (source.url) return { url: source.url, mimetype: source.mimetype ?? guessMimetype(content.kind), fileName: source.fileName };
  const item = await stores.media.get(source.mediaId!);
  const bytes = item && (await stores.media.bytes(item.id));
  if (!item || !bytes) throw new DriverError(`Media ${source.mediaId} is no longer available`, 'media_missing', false);
  // Sizes unknown at acceptance (received media fetched since) are held to the kind's limit here.
  try {
    assertMediaFits(content.kind, bytes);
  } catch (error) {
    throw new DriverError((error as Error).message, 'media_too_large', false);
  }
  return { bytes, mimetype: item.mimetype, fileName: source.fileName ?? item.fileName ?? undefined };
}

function guessMimetype(kind: string): string {
  return { image: 'image/jpeg', video: 'video/mp4', audio: 'audio/ogg', sticker: 'image/webp', document: 'application/octet-stream' }[kind] ?? 'application/octet-stream';
}
