import { releaseCredits } from '../plans/metering.ts';
import { CallSlots } from '../shared/call-slots.ts';
import { gatheredWrites } from '../shared/gathered-writes.ts';
import { readWith, type UnitOfWork } from '../shared/unit-of-work.ts';
import type { Connection, EventPublisher } from '../connections/connection.ts';
import { DriverError, SESSION_ELSEWHERE, type OutgoingMedia, type SendResult } from '../connections/driver.ts';
import type { ChatMessage } from './message.ts';
import { statusUpdateData } from './status-update.ts';
import { isMediaKind, type OutgoingContent, type OutgoingMessage } from './outgoing.ts';
import { assertMediaFits } from '../media/media-limits.ts';
import { recordAccepted } from './settle.ts';
import type { ClaimedSend, Requeued, SendQueue } from './send-queue.ts';
import {
  IN_DOUBT_ERROR,
  IN_DOUBT_GRACE_SECONDS,
  MAX_SESSION_HOPS,
  retryDelaySeconds,
  SEND_LEASE_RENEWAL_SECONDS,
  SEND_LEASE_SECONDS,
  SEND_RETRY_LIMIT,
} from './send-record.ts';
import type { SendDeps, SendStores } from './send.ts';

export type DeliverStores = SendStores & { events: EventPublisher; sendQueue: SendQueue };

/** A worker's hand on the send queue: who it is, and the queue (written outside transactions). */
export interface SendWorker {
  owner: string;
  queue: SendQueue;
  /** True once the worker stops: sends not started yet stay claimed, for the worker to give back. */
  stopping?(): boolean;
}

export interface Sender {
  /**
   * Sends claimed sends to their networks and records each outcome; resolves when all are
   * recorded, with the errors of writes that failed (those sends stay claimed or in flight, and
   * the queue takes them back when their lease lapses).
   */
  deliver(claimed: readonly ClaimedSend[]): Promise<Error[]>;
  /** Ends in-doubt sends whose grace is over and that no evidence settled: FAILED `send_in_doubt`. */
  giveUp(ids: readonly string[]): Promise<void>;
}

/**
 * The worker's half of sends (the message rows are the queue, see send-record.ts). Each claimed
 * send is marked in flight right before its network call, and its outcome is written as soon
 * as the call returns: the network's id (SENT, its credit consumed, its events), a retry later,
 * a failure (its credit given back), or in doubt when the call went unanswered. Calls run side by
 * side, one chat's messages one after another, oldest first. Writes of each kind arriving
 * together are gathered into one statement (one transaction for the sends the network took), so
 * under load a few statements carry many sends, and when idle each goes at once.
 *
 * What a crash leaves: a claimed send not yet in flight goes back to the queue when its lease
 * lapses (it never reached the network); an in-flight one becomes in doubt and is settled only
 * by the network's evidence (settle.ts) or given up, never sent again.
 */
export function createSender(uow: UnitOfWork<DeliverStores>, deps: SendDeps, worker: SendWorker): Sender {
  const leaseUntil = () => new Date(deps.clock.now().getTime() + SEND_LEASE_SECONDS * 1000);
  // A send goes on the wire with at least the lease a renewal guarantees: one claimed or renewed
  // within the last renewal period keeps its lease as it is.
  const leaseKeptFrom = () => new Date(deps.clock.now().getTime() + (SEND_LEASE_SECONDS - SEND_LEASE_RENEWAL_SECONDS) * 1000);
  const calls = new CallSlots(CALLS_PER_CONNECTION);
  /** The last work queued for each chat: a chat's next sends start when it ends. */
  const chatTails = new Map<string, Promise<void>>();
  function afterChat(chat: string, work: () => Promise<void>): Promise<void> {
    // Whatever became of the earlier work (its batch's lookup may have failed), this one runs.
    const run = (chatTails.get(chat) ?? Promise.resolve()).then(work, work);
    chatTails.set(chat, run);
    return run.finally(() => {
      if (chatTails.get(chat) === run) chatTails.delete(chat);
    });
  }
  const start = gatheredWrites(async (ids: string[]) => {
    const marked = await worker.queue.start(worker.owner, ids, leaseUntil(), leaseKeptFrom());
    return ids.map((id) => marked.has(id));
  });
  const took = gatheredWrites(async (sends: TookSend[]): Promise<Array<Error | undefined>> => {
    const together = await recordTook(uow, deps, sends).then(
      () => true,
      () => false,
    );
    if (together) return sends.map(() => undefined);
    // One of them could not be written with the others: each alone, so one bad write costs only its own.
    const errors: Array<Error | undefined> = [];
    for (const one of sends) errors.push(await recordTook(uow, deps, [one]).then(() => undefined, (error: Error) => error));
    return errors;
  });
  const requeue = gatheredWrites(async (sends: Requeued[]) => {
    await worker.queue.requeue(worker.owner, sends);
    return sends.map(() => undefined);
  });
  const doubt = gatheredWrites(async (ids: string[]) => {
    await worker.queue.doubt(worker.owner, ids, new Date(deps.clock.now().getTime() + IN_DOUBT_GRACE_SECONDS * 1000));
    return ids.map(() => undefined);
  });

  async function sendOne(send: ClaimedSend, connection: Connection | undefined): Promise<void> {
    const { message } = send;
    const prepared = await prepareOne(uow, message, connection);
    if ('refused' in prepared) return fail(uow, deps, message, failure(prepared.refused));
    // A call slot first, so that a send is marked in flight only when its request really goes
    // out (not while it would wait in a client's connection pool): a crash then leaves in doubt
    // only what the network may have.
    const release = await calls.acquire(message.connectionId);
    let result: SendResult;
    try {
      if (worker.stopping?.()) return;
      if (!(await start(message.id))) return; // its lease lapsed and another worker has it
      result = await deps.drivers.get(prepared.connection.driver)!.send(driverView(prepared.connection), prepared.outgoing, prepared.media);
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      return settleFailure(send, error);
    } finally {
      release();
    }
    const error = await took({ message, connection: prepared.connection, result });
    if (error) throw error;
  }

  async function settleFailure(send: ClaimedSend, error: Error): Promise<void> {
    const { message } = send;
    const now = deps.clock.now().getTime();
    if (error instanceof DriverError && error.unanswered) return doubt(message.id);
    if (error instanceof DriverError && error.code === SESSION_ELSEWHERE && send.hops < MAX_SESSION_HOPS) {
      // Only the worker holding the session can send: hand it on until one of them takes it.
      return requeue({ id: message.id, dueAt: new Date(now + 1000), attempts: send.attempts, hops: send.hops + 1 });
    }
    const retryable = error instanceof DriverError ? error.retryable : true;
    if (retryable && send.attempts < SEND_RETRY_LIMIT) {
      return requeue({ id: message.id, dueAt: new Date(now + retryDelaySeconds(send.attempts + 1) * 1000), attempts: send.attempts + 1, hops: send.hops });
    }
    return fail(uow, deps, message, failure(error));
  }

  return {
    async deliver(claimed) {
      const connections = readWith(uow, async (stores) => {
        const found = new Map<string, Connection | undefined>();
        for (const id of new Set(claimed.map((c) => c.message.connectionId))) found.set(id, await stores.connections.find(id));
        return found;
      });
      const errors: Error[] = [];
      // Each chat takes its place behind the sends of batches this worker is still sending before
      // anything is awaited: order holds across batches whatever their lookups take.
      const chats = byChat(claimed).map(([chat, sends]) =>
        afterChat(chat, async () => {
          const found = await connections;
          for (const send of sends) {
            await sendOne(send, found.get(send.message.connectionId)).catch((error: Error) => {
              errors.push(new Error(`message ${send.message.id}: ${error.message}`));
            });
          }
        }),
      );
      await Promise.all([connections, ...chats]);
      return errors;
    },

    async giveUp(ids) {
      for (const id of ids) {
        await uow.transaction(async (stores) => {
          const current = await stores.messages.lock(id);
          if (!current || current.status !== 'PENDING' || (await stores.sendQueue.stateOf(id)) !== 'in_doubt') return;
          const connection = await stores.connections.find(current.connectionId);
          // A network that recognises a repeat by our id cannot make it a second message: send it again.
          if (connection && deps.drivers.get(connection.driver)?.capabilities.idempotentSends) return stores.sendQueue.resend(worker.owner, [id], deps.clock.now());
          await failIn(stores, deps, current, IN_DOUBT_ERROR);
        });
      }
    },
  };
}

/** Network calls one worker makes at once on one connection. */
const CALLS_PER_CONNECTION = 32;

/** What a driver needs of a connection. */
export function driverView(connection: Connection) {
  return { id: connection.id, workspaceId: connection.workspaceId, credentials: connection.credentials, phoneNumber: connection.phoneNumber };
}

interface TookSend {
  message: ChatMessage;
  connection: Connection;
  result: SendResult;
}

/** Claimed sends grouped by chat, each group oldest first (ids are UUID v7): a contact receives a burst in the order it was accepted. */
function byChat(claimed: readonly ClaimedSend[]): Array<[string, ClaimedSend[]]> {
  const chats = new Map<string, ClaimedSend[]>();
  for (const send of claimed) {
    const chat = `${send.message.connectionId}|${send.message.remoteJid}`;
    chats.set(chat, [...(chats.get(chat) ?? []), send]);
  }
  return [...chats].map(([chat, sends]) => [chat, sends.sort((a, b) => (a.message.id < b.message.id ? -1 : 1))]);
}

type PreparedSend = { connection: Connection; outgoing: OutgoingMessage; media: OutgoingMedia | undefined } | { refused: Error };

/** The call a send makes, or why it cannot go at all (its connection deleted, its media gone): decided before the wire. */
async function prepareOne(uow: UnitOfWork<DeliverStores>, message: ChatMessage, connection: Connection | undefined): Promise<PreparedSend> {
  if (!connection) return { refused: new DriverError('The connection was deleted before the message went out', 'connection_deleted', false) };
  const content = message.content as OutgoingContent;
  let media: OutgoingMedia | undefined;
  try {
    media = isMediaKind(content.kind) ? await uow.transaction((stores) => mediaFor(stores, content)) : undefined;
  } catch (error) {
    return { refused: error as Error };
  }
  const outgoing: OutgoingMessage = { to: message.remoteJid, content, replyToExternalId: message.replyTo ?? undefined, clientMessageId: message.id };
  return { connection, outgoing, media };
}

/**
 * Records sends the network took, in one transaction (`recordAccepted`). Messages settled
 * meanwhile (by the network's evidence) are left as they are: the row locks make this and
 * `settleSendByEvidence` take turns, and only the one finding PENDING records.
 */
async function recordTook(uow: UnitOfWork<DeliverStores>, deps: SendDeps, sent: readonly TookSend[]): Promise<void> {
  if (sent.length === 0) return;
  await uow.transaction(async (stores) => {
    const current = new Map((await stores.messages.lockMany(sent.map((s) => s.message.id))).map((m) => [m.id, m]));
    const pending = sent.filter((s) => current.get(s.message.id)?.status === 'PENDING');
    await recordAccepted(stores, deps, pending.map((s) => ({ message: current.get(s.message.id)!, connection: s.connection, result: s.result })));
  });
}

/** Marks a PENDING message FAILED (leaving the send queue), gives its credit back and publishes `messages.update`. */
async function fail(uow: UnitOfWork<DeliverStores>, deps: Pick<SendDeps, 'clock'>, message: Pick<ChatMessage, 'id'>, error: { code: number | string; title: string }): Promise<void> {
  await uow.transaction(async (stores) => {
    const current = await stores.messages.lock(message.id);
    if (current?.status === 'PENDING') await failIn(stores, deps, current, error);
  });
}

/** `fail` in the caller's transaction, on the locked PENDING message. */
async function failIn(stores: DeliverStores, deps: Pick<SendDeps, 'clock'>, current: ChatMessage, error: { code: number | string; title: string }): Promise<void> {
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
    // Never confirmed by the network: no network id, so the service's own id names it.
    data: statusUpdateData({ messageId: current.id, remoteJid: current.remoteJid, status: 'FAILED', at: deps.clock.now(), error }),
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
