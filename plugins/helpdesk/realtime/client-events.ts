import type { Socket } from 'socket.io';
import { recordContact, type PresenceDeps } from './presence.ts';
import { conversationRoom, userRoom } from './rooms.ts';
import type { HelpdeskSession } from './session.ts';

/** What a client's acknowledgement callback receives. */
export type Answer = { ok: true } | { ok: false; error: string };

const INVALID: Answer = { ok: false, error: 'invalid payload' };
/** Spec 6.7: `subscribe:conversation` "fails with `conversation not found` if the conversation is invisible or missing". */
const NOT_FOUND: Answer = { ok: false, error: 'conversation not found' };
const OK: Answer = { ok: true };

/** Heartbeats closer than this are answered but not written (a client may not drive the database). */
const MIN_HEARTBEAT_SPACING_MS = 1_000;

/**
 * The client-to-server events of spec 6.7. A malformed payload is ignored (answered with
 * `invalid payload` when the client asked for an acknowledgement); every event about a
 * conversation needs the member to see it, with the same rule as the REST API.
 */
export function listenToClient(socket: Socket, session: HelpdeskSession, presence: PresenceDeps): void {
  const { userId } = session.actor;

  const on = listener(presence.log);
  on(socket, 'subscribe:conversation', async (payload) => {
    const conversationId = idField(payload, 'conversationId');
    if (!conversationId) return INVALID;
    if (!(await session.sees(conversationId))) return NOT_FOUND;
    await socket.join(conversationRoom(conversationId));
    return OK;
  });

  on(socket, 'unsubscribe:conversation', async (payload) => {
    const conversationId = idField(payload, 'conversationId');
    if (!conversationId) return INVALID;
    await socket.leave(conversationRoom(conversationId));
    return OK;
  });

  // "relayed between agents only, never to the contact, never echoed back": to the room less
  // every socket of the sender.
  for (const event of ['typing:start', 'typing:stop'] as const) {
    on(socket, event, async (payload) => {
      const conversationId = idField(payload, 'conversationId');
      if (!conversationId) return INVALID;
      if (!(await session.sees(conversationId))) return NOT_FOUND;
      socket.to(conversationRoom(conversationId)).except(userRoom(userId)).emit(event, { conversationId, userId });
      return OK;
    });
  }

  on(socket, 'read:up_to', async (payload) => {
    const conversationId = idField(payload, 'conversationId');
    const messageId = idField(payload, 'messageId');
    if (!conversationId || !messageId) return INVALID;
    if (!(await session.sees(conversationId))) return NOT_FOUND;
    socket.to(conversationRoom(conversationId)).except(userRoom(userId)).emit('read:up_to', { conversationId, userId, messageId });
    return OK;
  });

  let lastHeartbeat = 0;
  on(socket, 'presence:online', async () => {
    const now = Date.now();
    if (now - lastHeartbeat < MIN_HEARTBEAT_SPACING_MS) return OK;
    lastHeartbeat = now;
    // A key revoked (or a member removed) since the connection ends it here, within a heartbeat.
    if (!(await session.refresh(socket))) {
      // After the acknowledgement has gone out.
      setTimeout(() => socket.disconnect(), 0);
      return { ok: false, error: 'unauthorized' };
    }
    await recordContact(presence, session.actor.workspaceId, userId);
    return OK;
  });
}

/** The acknowledgement, when the client asked for one, is the last argument. */
const listener = (log: PresenceDeps['log']) => (socket: Socket, event: string, handle: (payload: unknown) => Promise<Answer>): void => {
  socket.on(event, (...args: unknown[]) => {
    const ack = typeof args.at(-1) === 'function' ? (args.pop() as (answer: Answer) => void) : undefined;
    handle(args[0]).then(
      (answer) => ack?.(answer),
      (error: unknown) => {
        log.error({ event, error: { message: error instanceof Error ? error.message : String(error) } }, 'helpdesk websocket event failed');
        ack?.({ ok: false, error: 'internal error' });
      },
    );
  });
};

/**
 * An id field of an object payload: a string of reasonable length, else malformed. An id that
 * names nothing is not malformed: the conversation is then not found. Lower case, as ids are
 * stored, so one conversation is one room.
 */
function idField(payload: unknown, field: string): string | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const value = (payload as Record<string, unknown>)[field];
  return typeof value === 'string' && value.length > 0 && value.length <= 64 ? value.toLowerCase() : undefined;
}
