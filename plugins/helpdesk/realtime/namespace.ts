import type { Socket } from 'socket.io';
import type { PluginContext } from '../../kernel/context.ts';
import { accessChangeConcerns, type RealtimeServer } from '../../kernel/realtime.ts';
import type { HandshakeHeaders } from '../../kernel/sessions.ts';
import type { RealtimeSignals } from '../../kernel/plugin.ts';
import { listenToClient } from './client-events.ts';
import { presenceDeps, recordContact, sweepIntervalMs, sweepPresence, withdrawPresenceAnnouncements, workspacePresence, type PresenceDeps } from './presence.ts';
import { HELPDESK_NAMESPACE } from './rooms.ts';
import { HelpdeskSession, isCredentialFailure, UNAUTHORIZED } from './session.ts';

/**
 * The helpdesk's websocket (spec 5.5, 6.7): namespace `/helpdesk` on the server's Socket.IO
 * server. The plugin's `realtime` hook; returns the stop of the presence sweep.
 */
export function helpdeskRealtime(io: RealtimeServer, ctx: PluginContext, signals: RealtimeSignals): () => Promise<void> {
  const presence = presenceDeps(ctx);
  // Not in `socket.data`: an adapter may serialize that to other servers, and a session holds
  // the API key (or the handshake's session cookie) and the context.
  const sessions = new WeakMap<Socket, HelpdeskSession>();
  const namespace = io.of(HELPDESK_NAMESPACE);
  // Access changes seen by this process so far. A socket still authenticating is not among the
  // namespace's sockets yet, so a change then would miss it: it is re-checked once connected
  // when the count moved meanwhile.
  let accessChanges = 0;
  const countAtAuthentication = new WeakMap<Socket, number>();

  // Namespace middleware: a refusal is a `connect_error` on this namespace; the connection
  // itself stays open (spec 5.5: "the socket is not closed").
  namespace.use((socket, next) => {
    countAtAuthentication.set(socket, accessChanges);
    HelpdeskSession.open(ctx, socket.handshake.query.apikey, handshakeHeaders(socket.handshake)).then(
      (session) => {
        sessions.set(socket, session);
        next();
      },
      (error: unknown) => {
        if (isCredentialFailure(error)) return next(new Error(UNAUTHORIZED));
        ctx.log.error({ error: errorMessage(error) }, 'helpdesk websocket authentication failed');
        next(new Error('service unavailable'));
      },
    );
  });

  namespace.on('connection', (socket) => {
    const session = sessions.get(socket);
    if (!session) return void socket.disconnect();
    // Joined and listening before anything asynchronous: an event sent right after `connect` is heard.
    void socket.join(session.rooms());
    listenToClient(socket, session, presence);
    void greet(socket, session, presence);
    if (countAtAuthentication.get(socket) !== accessChanges) void recheck(socket, session, ctx.log);
  });

  // Within moments of a revocation, a removal or an inbox's new members, not at the next heartbeat.
  signals.onAccessChanged((change) => {
    accessChanges += 1;
    for (const socket of namespace.sockets.values()) {
      const session = sessions.get(socket);
      if (session && accessChangeConcerns(change, session.actor)) void recheck(socket, session, ctx.log);
    }
  });

  return sweepEvery(presence);
}

/** The session re-checked now: a failed credential ends it, otherwise the socket moves between rooms. */
async function recheck(socket: Socket, session: HelpdeskSession, log: PluginContext['log']): Promise<void> {
  try {
    if (!(await session.refresh(socket))) socket.disconnect();
  } catch (error) {
    // The heartbeat's re-check is still to come.
    log.error({ workspaceId: session.actor.workspaceId, error: errorMessage(error) }, 'helpdesk websocket re-check after an access change failed');
  }
}

/** The connection counts as contact; the socket then gets the workspace's presence (spec 6.7: "snapshot on connect"). */
async function greet(socket: Socket, session: HelpdeskSession, presence: PresenceDeps): Promise<void> {
  const { workspaceId, userId } = session.actor;
  try {
    await recordContact(presence, workspaceId, userId);
    socket.emit('presence.update', { users: await workspacePresence(presence, workspaceId) });
  } catch (error) {
    presence.log.error({ workspaceId, error: errorMessage(error) }, 'helpdesk presence on connect failed');
  }
}

/**
 * Decay needs a clock, not an event: each server process sweeps on a timer. A timer rather than
 * a queue job because it needs no chain of self-scheduled jobs to keep alive, reacts within a
 * second where pg-boss polls delayed jobs every few, and runs exactly where sockets are (a
 * process with no sockets has no one to tell). With several server processes each sweeps; the
 * compare-and-set on `announced` makes each decay announced once, and the announcement goes
 * through the realtime hub, so it reaches sockets on every process.
 */
function sweepEvery(presence: PresenceDeps): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = sweepPresence(presence)
      .catch((error: unknown) => presence.log.error({ error: errorMessage(error) }, 'helpdesk presence sweep failed'))
      .finally(() => (running = undefined));
  }, sweepIntervalMs(presence.ttlMs));
  return async () => {
    clearInterval(timer);
    withdrawPresenceAnnouncements(presence.hub);
    await running;
  };
}

/**
 * The handshake's headers, with the workspace a browser chose: a page cannot set `X-Account-Id`
 * on a websocket, so a session's socket may name it as `auth: { accountId }` instead (the
 * header wins when both are given). Only a sign-in session reads it; an `apikey` names its own.
 */
function handshakeHeaders(handshake: { headers: HandshakeHeaders; auth: unknown }): HandshakeHeaders {
  const chosen = (handshake.auth as { accountId?: unknown } | undefined)?.accountId;
  if (typeof chosen !== 'string' || handshake.headers['x-account-id'] !== undefined) return handshake.headers;
  return { ...handshake.headers, 'x-account-id': chosen };
}

function errorMessage(error: unknown): { message: string } {
  return { message: error instanceof Error ? error.message : String(error) };
}
