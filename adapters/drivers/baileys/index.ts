import { errorField, log } from '../../logging/logger.ts';
import type { Kysely } from 'kysely';
import {
  DisconnectReason,
  downloadMediaMessage,
  makeCacheableSignalKeyStore,
  makeWASocket,
  type AnyMessageContent,
  type AuthenticationState,
  type BaileysEventMap,
  type CacheStore,
  type ConnectionState,
  type MiscMessageGenerationOptions,
  type WABrowserDescription,
  type WAMessage,
  type WAMessageKey,
  type WAMessageUpdate,
  type WAPresence,
  type proto,
} from 'baileys';
import type { ILogger } from 'baileys/lib/Utils/logger.js';
import { SESSION_ELSEWHERE, MEDIA_GONE, DriverError, type DriverCapabilities, type DriverConnection, type DriverEvents, type NetworkDriver, type OutgoingMedia, type SendResult } from '../../../core/connections/driver.ts';
import type { DeliveryStatus } from '../../../core/messaging/delivery-status.ts';
import type { ReceivedMessage } from '../../../core/messaging/incoming.ts';
import { isMediaKind, type OutgoingMessage } from '../../../core/messaging/outgoing.ts';
import type { Clock } from '../../../core/shared/ports.ts';
import { clearAuthState, createKeyCache, LeaseLostError, readStoredValue, replaceAuthState, usePostgresAuthState, type PostgresAuthState } from './auth-state.ts';
import { inspectSessionMaterial, type SessionMaterial } from './session-material.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { LeaseKeeper, LeaseStore, realTimers, revokedAction, type LeaseHolder, type Timers } from './lease.ts';
import { albumOf, chatJid, isReportable, mapIncoming, plain } from './message-mapping.ts';
import { MessageStore } from './message-store.ts';
import { quotedMessage, toBaileysContent, toJid } from './outgoing-mapping.ts';
import { createOutbound, type Outbound } from '../../outbound/outbound.ts';
import { downloadMediaUrl } from '../../outbound/media-url.ts';
import { NOTHING_ALLOWED } from '../../../core/shared/outbound-policy.ts';

/**
 * The unofficial network driver on Baileys 7 (WhatsApp Web multi-device).
 *
 * - The pairing (credentials and Signal keys) lives in Postgres (`auth-state.ts`), so a session
 *   survives restarts and moves between workers.
 * - One worker runs each live session: `connect` takes the connection's lease (`lease.ts`) or, if
 *   another live worker holds it, does nothing. The keeper renews the leases of the sessions this
 *   worker runs; a worker that loses a lease closes its socket. When a worker dies its leases run
 *   out, and the next `connect` for the connection (the service asks again for every connection
 *   that wants a session) takes it over on whichever worker makes it.
 * - A dropped session reconnects by itself with exponential backoff (1 s doubling to 60 s, with
 *   jitter); a logout by the phone ends the pairing and does not reconnect.
 * - `disconnect` works from any process: where the session runs it closes (or logs out) the
 *   socket; elsewhere it revokes the lease and the running worker stops at its next renewal.
 * - `send` and `sendTyping` need the live socket, so they work only in the process running the
 *   session; elsewhere they throw a retryable `DriverError` (`session_elsewhere` naming the owner,
 *   see `ownerOf`, or `not_connected`). `fetchMedia` works anywhere (raw messages are stored).
 */

/** What of a Baileys socket the driver uses; `makeWASocket`'s socket is one, a test's fake another. */
export interface BaileysSocket {
  ev: {
    on<T extends keyof BaileysEventMap>(event: T, listener: (arg: BaileysEventMap[T]) => void): void;
  };
  user?: { id: string } | undefined;
  sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined>;
  sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void>;
  onWhatsApp?(...jids: string[]): Promise<Array<{ jid: string; exists: boolean }> | undefined>;
  requestPairingCode(phoneNumber: string): Promise<string>;
  logout(msg?: string): Promise<void>;
  end(error: Error | undefined): void | Promise<void>;
  updateMediaMessage?(message: WAMessage): Promise<WAMessage>;
}

export interface BaileysSocketConfig {
  connectionId: string;
  auth: AuthenticationState;
  logger: ILogger;
  browser?: WABrowserDescription;
  /** Answers the network's retry requests from the message store. */
  getMessage(key: WAMessageKey): Promise<proto.IMessage | undefined>;
}

export type SocketFactory = (config: BaileysSocketConfig) => BaileysSocket;

export interface BaileysDriverOptions {
  db: Kysely<any>;
  /** Seals the pairing (credentials and Signal keys) at rest, as connection credentials are. */
  box?: SecretBox;
  /** This worker's name in leases: unique per process (host, pid, a random part). */
  owner: string;
  /** Time for leases; by default the database's clock (workers' clocks may disagree). */
  clock?: Clock;
  socketFactory?: SocketFactory;
  /** How long a lease lasts without renewal (default 30 s); renewed every third of it. */
  leaseTtlMs?: number;
  renewEveryMs?: number;
  timers?: Timers;
  /** [0, 1) for the reconnect jitter. */
  random?: () => number;
  logger?: ILogger;
  browser?: WABrowserDescription;
  /** Stored raw messages older than this are pruned (default 30 days). */
  messageRetentionMs?: number;
  /** Media download (tests replace it; the real one fetches from the network's CDN). */
  download?: typeof downloadMediaMessage;
  /** Media `url` sends are downloaded here, through the outbound policy (default: nothing exempted). */
  outbound?: Outbound;
  /** `MAX_MEDIA_BYTES`: lowers the per-kind limit of media `url` downloads. */
  maxMediaBytes?: number;
  /** Failures inside event handling that have no caller to throw to. */
  onError?: (error: unknown, context: string) => void;
}

export const BAILEYS_CAPABILITIES: DriverCapabilities = {
  official: false,
  sendWindow: false,
  templates: false,
  carousels: false,
  flows: false,
  typing: true,
  pairing: 'qr',
};

export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_MAX_MS = 60_000;

/** Delay before reconnect attempt `attempt` (0-based): 1 s doubling to 60 s, ±20 % jitter, never above 60 s. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt));
  return Math.min(BACKOFF_MAX_MS, Math.round(base * (0.8 + 0.4 * random())));
}

/** Baileys `WAMessageStatus` → the core's delivery status (PENDING is not a receipt). */
export function receiptStatus(status: number | null | undefined): DeliveryStatus | undefined {
  switch (status) {
    case 0:
      return 'FAILED';
    case 2:
      return 'SENT';
    case 3:
      return 'DELIVERED';
    case 4:
    case 5:
      return 'READ';
    default:
      return undefined;
  }
}

interface Session {
  connection: DriverConnection;
  events: DriverEvents;
  pairingPhoneNumber?: string;
  socket?: BaileysSocket;
  auth?: PostgresAuthState;
  open: boolean;
  stopped: boolean;
  /** Reconnect attempts since the last open (or QR). */
  attempt: number;
  reconnectTimer?: unknown;
  /** Bumped for every socket, so a replaced socket's late events are ignored. */
  generation: number;
  pairingRequested: boolean;
  /** Events are handled one at a time, in the order the socket emitted them. */
  queue: Promise<void>;
  keyCache: CacheStore;
}

export interface BaileysDriver extends NetworkDriver {
  /** This worker's name in leases. */
  readonly owner: string;
  /** The worker running a connection's session now (a live lease), if any: where its sends must go. */
  ownerOf(connectionId: string): Promise<string | undefined>;
  /** Connections whose session runs in this process. */
  runningSessions(): string[];
  /** Closes every local session (keeping pairings) and gives the leases up: for shutdown. */
  shutdown(): Promise<void>;
  readonly leases: LeaseStore;
  readonly messages: MessageStore;
  /**
   * Stores imported session material (checked by `sessionImport.inspect`) as the connection's
   * pairing, in the caller's transaction `db`. A session still running on the old pairing (one
   * waiting for a QR scan) loses its lease, so its writes are fenced off from the new pairing.
   */
  storeImportedSession(db: Kysely<any>, connectionId: string, material: unknown): Promise<void>;
}

const SILENT_LOGGER: ILogger = {
  level: 'silent',
  child: () => SILENT_LOGGER,
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

const PRUNE_EVERY_MS = 60 * 60 * 1000;
const REVOKE_MESSAGE_STUB = 1; // proto.WebMessageInfo.StubType.REVOKE

export function createBaileysDriver(options: BaileysDriverOptions): BaileysDriver {
  const { db, owner } = options;
  const ttlMs = options.leaseTtlMs ?? 30_000;
  const timers = options.timers ?? realTimers;
  const random = options.random ?? Math.random;
  const logger = options.logger ?? SILENT_LOGGER;
  const download = options.download ?? downloadMediaMessage;
  const outbound = options.outbound ?? createOutbound(NOTHING_ALLOWED);
  const retentionMs = options.messageRetentionMs ?? 30 * 24 * 60 * 60 * 1000;
  const nowMs = () => (options.clock ? options.clock.now().getTime() : Date.now());
  const onError = options.onError ?? ((error: unknown, context: string) => log.error({ driver: 'baileys', context, error: errorField(error) }, 'unofficial session failed'));
  const socketFactory: SocketFactory =
    options.socketFactory ??
    ((config) =>
      makeWASocket({
        auth: config.auth,
        logger: config.logger,
        getMessage: config.getMessage,
        markOnlineOnConnect: false,
        ...(config.browser && { browser: config.browser }),
      }));

  const leases = new LeaseStore(db, options.clock);
  const messages = new MessageStore(db);
  const sessions = new Map<string, Session>();
  let lastPrune = 0;

  const keeper = new LeaseKeeper(leases, {
    owner,
    ttlMs,
    intervalMs: options.renewEveryMs,
    timers,
    now: nowMs,
    onLost: (connectionId, holder) => loseSession(connectionId, holder),
    onError: (error) => onError(error, 'lease renewal'),
  });

  function enqueue(session: Session, generation: number, context: string, work: () => Promise<void>): void {
    session.queue = session.queue.then(async () => {
      if (session.stopped || session.generation !== generation) return;
      try {
        await work();
      } catch (error) {
        if (error instanceof LeaseLostError) {
          await loseSession(session.connection.id, await leases.holder(session.connection.id).catch(() => undefined));
          return;
        }
        onError(error, `${context} (connection ${session.connection.id})`);
      }
    });
  }

  async function startSocket(session: Session): Promise<void> {
    const connectionId = session.connection.id;
    const auth = await usePostgresAuthState(db, connectionId, { fence: { owner }, box: options.box });
    if (session.stopped) return;
    const generation = ++session.generation;
    session.auth = auth;
    session.open = false;
    session.pairingRequested = false;
    const socket = socketFactory({
      connectionId,
      auth: { creds: auth.state.creds, keys: makeCacheableSignalKeyStore(auth.state.keys, logger, session.keyCache) },
      logger,
      ...(options.browser && { browser: options.browser }),
      getMessage: async (key) => (key.id ? ((await messages.get(connectionId, key.id))?.message ?? undefined) : undefined),
    });
    session.socket = socket;

    const on = <T extends keyof BaileysEventMap>(event: T, handler: (arg: BaileysEventMap[T]) => Promise<void>) =>
      socket.ev.on(event, (arg) => enqueue(session, generation, event, () => handler(arg)));

    on('creds.update', () => auth.saveCreds());
    on('connection.update', (update) => onConnectionUpdate(session, socket, update));
    on('messages.upsert', ({ messages: list }) => onUpsert(session, list));
    on('messages.update', (updates) => onMessagesUpdate(session, updates));
    on('presence.update', (presence) => session.events.passthrough('presence.update', chatJid({ remoteJid: presence.id }), plain(presence)));
  }

  async function onConnectionUpdate(session: Session, socket: BaileysSocket, update: Partial<ConnectionState>): Promise<void> {
    if (update.qr) {
      session.attempt = 0;
      const registered = session.auth?.state.creds.registered === true;
      if (session.pairingPhoneNumber && !registered) {
        if (!session.pairingRequested) {
          session.pairingRequested = true;
          try {
            const code = await socket.requestPairingCode(session.pairingPhoneNumber);
            await session.events.status({ event: 'qr', pairingCode: code });
          } catch (error) {
            // The QR still works: offer it rather than nothing.
            onError(error, 'pairing code request');
            await session.events.status({ event: 'qr', qr: update.qr });
          }
        }
      } else {
        await session.events.status({ event: 'qr', qr: update.qr });
      }
    }
    if (update.connection === 'open') {
      session.open = true;
      session.attempt = 0;
      const phoneNumber = phoneOf(socket.user?.id);
      await session.events.status({ event: 'opened', ...(phoneNumber && { phoneNumber }) });
    }
    if (update.connection === 'close') {
      session.open = false;
      await onClose(session, update.lastDisconnect?.error);
    }
  }

  async function onClose(session: Session, error: unknown): Promise<void> {
    const code = statusCodeOf(error);
    const reason = reasonOf(code, error);
    if (code === DisconnectReason.loggedOut) {
      // The phone unlinked this device (or the network revoked it): the pairing is over.
      await endSession(session);
      await clearAuthState(db, session.connection.id);
      await leases.release(session.connection.id, owner);
      await session.events.status({ event: 'loggedOut', reason });
      return;
    }
    await session.events.status({ event: 'dropped', reason });
    // After a QR scan the network asks for a restart: at once, it is not a failure.
    const delay = code === DisconnectReason.restartRequired ? 0 : backoffDelay(session.attempt++, random);
    scheduleReconnect(session, delay);
  }

  function scheduleReconnect(session: Session, delay: number): void {
    if (session.stopped) return;
    if (session.reconnectTimer !== undefined) timers.clearTimeout(session.reconnectTimer);
    session.reconnectTimer = timers.setTimeout(() => {
      session.reconnectTimer = undefined;
      void reconnect(session);
    }, delay);
  }

  async function reconnect(session: Session): Promise<void> {
    if (session.stopped) return;
    const connectionId = session.connection.id;
    let stillOurs: boolean;
    try {
      stillOurs = await leases.renew(connectionId, owner, ttlMs);
    } catch (error) {
      onError(error, `reconnect lease check (connection ${connectionId})`);
      scheduleReconnect(session, backoffDelay(session.attempt++, random));
      return;
    }
    if (!stillOurs) {
      await loseSession(connectionId, await leases.holder(connectionId).catch(() => undefined));
      return;
    }
    try {
      await startSocket(session);
    } catch (error) {
      onError(error, `reconnect (connection ${connectionId})`);
      scheduleReconnect(session, backoffDelay(session.attempt++, random));
    }
  }

  async function onUpsert(session: Session, list: WAMessage[]): Promise<void> {
    const connectionId = session.connection.id;
    const reported: ReceivedMessage[] = [];
    for (const msg of list) {
      if (!isReportable(msg)) continue;
      const album = albumOf(msg);
      let albumIndex: number | undefined;
      try {
        if (album && album.index === undefined) albumIndex = await messages.albumCount(connectionId, album.id);
        await messages.save(connectionId, msg, album?.id);
      } catch (error) {
        // The message is still reported; only its media, quoting and retries suffer.
        onError(error, `storing message ${msg.key.id}`);
      }
      maybePrune();
      const received = mapIncoming(msg, { albumIndex });
      if (!received) continue;
      // One of ours, under the id chosen before sending: the service settles the send if it is still PENDING.
      const clientMessageId = received.fromMe ? clientMessageIdOf(received.externalId) : undefined;
      reported.push(clientMessageId ? { ...received, clientMessageId } : received);
    }
    // Handed over together, in order: the service stores the messages of one upsert in one batch.
    await Promise.all(reported.map((received) => session.events.message(received)));
  }

  async function onMessagesUpdate(session: Session, updates: WAMessageUpdate[]): Promise<void> {
    for (const { key, update } of updates) {
      if (!key?.id) continue;
      const remoteJid = chatJid(key);
      const status = update.status === null || update.status === undefined ? undefined : receiptStatus(update.status);
      if (status && key.fromMe === true) {
        await session.events.receipt({
          externalId: key.id,
          remoteJid,
          status,
          ...(status === 'FAILED' && { error: { code: 'ERROR', title: 'The network reported the message as failed' } }),
        });
      }
      const message = update.message as Record<string, any> | null | undefined;
      if (message?.editedMessage) {
        await session.events.passthrough('messages.edited', remoteJid, plain({ key, update }));
      } else if (update.messageStubType === REVOKE_MESSAGE_STUB || ('message' in update && message === null && update.messageStubType !== undefined)) {
        await session.events.passthrough('messages.delete', remoteJid, plain({ key, update }));
      }
    }
  }

  function maybePrune(): void {
    const now = nowMs();
    if (now - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = now;
    messages.prune(new Date(now - retentionMs)).catch((error) => onError(error, 'pruning stored messages'));
  }

  /** Stops a local session without touching lease or pairing. */
  async function endSession(session: Session): Promise<void> {
    session.stopped = true;
    if (session.reconnectTimer !== undefined) timers.clearTimeout(session.reconnectTimer);
    session.reconnectTimer = undefined;
    keeper.remove(session.connection.id);
    session.keyCache.flushAll();
    if (sessions.get(session.connection.id) === session) sessions.delete(session.connection.id);
  }

  /**
   * The lease went to another worker or was revoked: close the socket, report nothing. A revoke
   * for a logout logs the device out; so does a lease that vanished with its connection (the
   * connection was deleted), so the phone does not keep a linked device nobody runs.
   */
  async function loseSession(connectionId: string, holder: LeaseHolder | undefined): Promise<void> {
    const session = sessions.get(connectionId);
    if (!session) return;
    await endSession(session);
    const socket = session.socket;
    const deleted = holder === undefined && !(await connectionExists(connectionId).catch(() => true));
    if (revokedAction(holder) === 'logout' || deleted) {
      await socket?.logout().catch(() => socket?.end(undefined));
      await clearAuthState(db, connectionId);
    } else {
      await closeQuietly(socket);
    }
  }

  async function connectionExists(connectionId: string): Promise<boolean> {
    const row = await db.selectFrom('connections').select('id').where('id', '=', connectionId).executeTakeFirst();
    return row !== undefined;
  }

  async function ownerOf(connectionId: string): Promise<string | undefined> {
    const holder = await leases.holder(connectionId);
    if (!holder || revokedAction(holder)) return undefined;
    return holder.expiresAt.getTime() > nowMs() || holder.owner === owner ? holder.owner : undefined;
  }

  async function liveSocket(connection: DriverConnection): Promise<BaileysSocket> {
    const session = sessions.get(connection.id);
    if (session?.socket && session.open && !session.stopped) return session.socket;
    if (!session) {
      const elsewhere = await ownerOf(connection.id).catch(() => undefined);
      if (elsewhere && elsewhere !== owner) throw new DriverError(`session runs on worker ${elsewhere}`, SESSION_ELSEWHERE, true);
    }
    throw new DriverError('session not connected', 'not_connected', true);
  }

  /** Whether the stored pairing is complete (a pairing code makes no sense then). */
  async function registered(connectionId: string): Promise<boolean> {
    const row = await db
      .selectFrom('baileys_auth')
      .select('value')
      .where('connection_id', '=', connectionId)
      .where('kind', '=', 'creds')
      .executeTakeFirst();
    return row ? readStoredValue<{ registered?: boolean }>(options.box, row.value).registered === true : false;
  }

  return {
    name: 'baileys',
    capabilities: BAILEYS_CAPABILITIES,
    owner,
    ownerOf,
    leases,
    messages,

    async connect(connection, events, connectOptions = {}) {
      const pairingPhoneNumber = connectOptions.pairingPhoneNumber?.replace(/[^0-9]/g, '') || undefined;
      const existing = sessions.get(connection.id);
      if (existing && !existing.stopped) {
        existing.connection = connection;
        existing.events = events;
        if (pairingPhoneNumber && pairingPhoneNumber !== existing.pairingPhoneNumber) {
          existing.pairingPhoneNumber = pairingPhoneNumber;
          existing.pairingRequested = false;
        }
        return;
      }
      if (!(await leases.acquire(connection.id, owner, ttlMs))) {
        // Another live worker runs it. A pairing code must come from a socket that knows the
        // number: while still unpaired, the session moves here (the other worker lets go at its
        // next renewal). Otherwise that worker runs it and there is nothing to do.
        if (!pairingPhoneNumber || (await registered(connection.id))) return;
        await leases.revoke(connection.id, 'disconnect');
        if (!(await leases.acquire(connection.id, owner, ttlMs))) return;
      }
      const session: Session = {
        connection,
        events,
        ...(pairingPhoneNumber && { pairingPhoneNumber }),
        open: false,
        stopped: false,
        attempt: 0,
        generation: 0,
        pairingRequested: false,
        queue: Promise.resolve(),
        keyCache: createKeyCache(),
      };
      sessions.set(connection.id, session);
      keeper.add(connection.id);
      try {
        await startSocket(session);
      } catch (error) {
        await endSession(session);
        await leases.release(connection.id, owner).catch(() => {});
        throw error;
      }
    },

    async disconnect(connection, { logout }) {
      const session = sessions.get(connection.id);
      if (session) {
        await endSession(session);
        const socket = session.socket;
        if (logout) {
          if (socket) await socket.logout().catch(() => closeQuietly(socket));
          await clearAuthState(db, connection.id);
        } else {
          await closeQuietly(socket);
        }
        await leases.release(connection.id, owner);
        return;
      }
      // Not running here: whoever runs it stops at its next renewal (logging out for a logout).
      await leases.revoke(connection.id, logout ? 'logout' : 'disconnect');
      if (logout) await clearAuthState(db, connection.id);
    },

    async send(connection, message: OutgoingMessage, media?: OutgoingMedia): Promise<SendResult> {
      const socket = await liveSocket(connection);
      const jid = toJid(message.to);
      const reactionKey =
        message.content.kind === 'reaction' ? await messages.keyOf(connection.id, message.content.reaction.messageId) : undefined;
      // A URL is downloaded here, through the outbound policy, never by the library itself.
      if (media?.url && !media.bytes && isMediaKind(message.content.kind)) {
        media = { ...media, bytes: await downloadMediaUrl(outbound, media.url, message.content.kind, options.maxMediaBytes), url: undefined };
      }
      const content = toBaileysContent(message, { ...(media && { media }), ...(reactionKey && { reactionKey }) });
      const quoted = message.replyToExternalId
        ? quotedMessage(message.to, message.replyToExternalId, await messages.get(connection.id, message.replyToExternalId))
        : undefined;
      // The message id is chosen before sending, from ours: if this worker dies before the answer
      // is recorded, the echo of the message (`fromMe`, after a reconnect) names the send it settles.
      const messageId = message.clientMessageId ? networkIdFor(message.clientMessageId) : undefined;
      const sendOptions = quoted || messageId ? { ...(quoted && { quoted }), ...(messageId && { messageId }) } : undefined;
      let sent: WAMessage | undefined;
      try {
        sent = await socket.sendMessage(jid, content, sendOptions);
      } catch (error) {
        throw toDriverError(error, 'send failed');
      }
      const externalId = sent?.key?.id;
      if (!externalId) throw new DriverError('the network accepted the message but returned no id', 'no_message_id', false);
      await messages.save(connection.id, sent!).catch((error) => onError(error, `storing sent message ${externalId}`));
      return { externalId };
    },

    async fetchMedia(connection, ref) {
      const raw = await messages.get(connection.id, ref);
      const mapped = raw ? mapIncoming(raw) : undefined;
      if (!raw || !mapped?.media) throw new DriverError(`no media message ${ref} on this connection`, MEDIA_GONE, false);
      const session = sessions.get(connection.id);
      const socket = session && !session.stopped ? session.socket : undefined;
      const ctx = socket?.updateMediaMessage ? { logger, reuploadRequest: (m: WAMessage) => socket.updateMediaMessage!(m) } : undefined;
      try {
        const bytes = await download(raw, 'buffer', {}, ctx);
        return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), mimetype: mapped.media.mimetype };
      } catch (error) {
        const failure = toDriverError(error, 'media download failed');
        // The media server no longer has the file (and no live session could ask for a re-upload).
        throw failure.code === 404 || failure.code === 410 ? new DriverError(failure.message, MEDIA_GONE, false) : failure;
      }
    },

    async lookupNumber(connection, phone) {
      const socket = await liveSocket(connection);
      if (!socket.onWhatsApp) throw new DriverError('this session cannot look numbers up', 'unsupported_lookup', false);
      try {
        const [found] = (await socket.onWhatsApp(toJid(phone))) ?? [];
        return { exists: Boolean(found?.exists), jid: found?.exists ? found.jid : null };
      } catch (error) {
        throw toDriverError(error, 'number lookup failed');
      }
    },

    async sendTyping(connection, to, typing) {
      const socket = await liveSocket(connection);
      await socket.sendPresenceUpdate(typing ? 'composing' : 'paused', toJid(to));
    },

    runningSessions: () => [...sessions.keys()],

    sessionImport: { inspect: inspectSessionMaterial },

    async storeImportedSession(trx, connectionId, material) {
      await new LeaseStore(trx, options.clock).revoke(connectionId, 'disconnect');
      await replaceAuthState(trx, options.box, connectionId, material as SessionMaterial);
    },

    async shutdown() {
      for (const session of [...sessions.values()]) {
        await endSession(session);
        await closeQuietly(session.socket);
        await leases.release(session.connection.id, owner).catch(() => {});
      }
      keeper.stop();
    },
  };
}

/** `5511999999999:12@s.whatsapp.net` → `5511999999999`. */
/**
 * The network id of a send, chosen before it goes: Baileys' own shape (`3EB0` and upper-case
 * hex, as `generateMessageID`; the network reads `3EB0` as a web client) built from our message
 * id (a UUID), so the id alone names our message. Undefined for an id that is not a UUID.
 */
export function networkIdFor(clientMessageId: string): string | undefined {
  const hex = clientMessageId.replace(/-/g, '');
  return /^[0-9a-f]{32}$/i.test(hex) ? `3EB0${hex.toUpperCase()}` : undefined;
}

/** Our message id inside a network id made by `networkIdFor`, or undefined for any other id. */
export function clientMessageIdOf(networkId: string): string | undefined {
  const match = /^3EB0([0-9A-F]{8})([0-9A-F]{4})([0-9A-F]{4})([0-9A-F]{4})([0-9A-F]{12})$/.exec(networkId);
  return match ? match.slice(1).join('-').toLowerCase() : undefined;
}

export function phoneOf(jid: string | undefined): string | undefined {
  if (!jid) return undefined;
  const user = jid.split('@')[0]?.split(':')[0];
  return user && /^\d+$/.test(user) ? user : undefined;
}

function statusCodeOf(error: unknown): number | undefined {
  const e = error as { output?: { statusCode?: unknown }; statusCode?: unknown } | undefined;
  const code = e?.output?.statusCode ?? e?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

function reasonOf(code: number | undefined, error: unknown): string {
  const name = code === undefined ? undefined : (DisconnectReason as unknown as Record<number, string>)[code];
  const message = error instanceof Error ? error.message : undefined;
  return [name ?? (code === undefined ? 'closed' : `status ${code}`), message].filter(Boolean).join(': ');
}

/** Connection-level failures are worth retrying; what the network refused is not. */
function toDriverError(error: unknown, what: string): DriverError {
  if (error instanceof DriverError) return error;
  const code = statusCodeOf(error);
  const message = `${what}: ${error instanceof Error ? error.message : String(error)}`;
  const retryable = code === undefined ? /connection (closed|lost)|timed? ?out|ECONNRESET|ETIMEDOUT/i.test(message) : code === 408 || code === 428 || code === 440 || code >= 500;
  return new DriverError(message, code ?? 'network_error', retryable);
}

async function closeQuietly(socket: BaileysSocket | undefined): Promise<void> {
  try {
    await socket?.end(undefined);
  } catch {
    // already closed
  }
}
