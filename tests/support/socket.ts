import { io, type Socket } from 'socket.io-client';

/**
 * A real Socket.IO client on a running service's `/helpdesk` namespace (spec 6.7: path `/ws`),
 * with what tests need: the connection outcome, events recorded from the start, waiting for one.
 */
export interface TestSocket {
  socket: Socket;
  /** Every event received so far, in order. */
  received: Array<{ event: string; payload: any }>;
  /**
   * The first event (already received or to come) of this name whose payload passes `match`;
   * with `after`, only among those received after the first `after` (a `received.length` taken earlier).
   */
  next(event: string, match?: (payload: any) => boolean, options?: { timeoutMs?: number; after?: number }): Promise<any>;
  /** Emits and resolves with the acknowledgement. */
  ask(event: string, payload?: unknown, timeoutMs?: number): Promise<any>;
  close(): void;
}

export type Transport = 'polling' | 'websocket';

/** Resolves once connected; rejects with the `connect_error` (its `message` is the server's). */
export async function connectHelpdesk(
  baseUrl: string,
  apikey: string | undefined,
  options: { transports?: Transport[]; extraHeaders?: Record<string, string> } = {},
): Promise<TestSocket> {
  const socket = io(`${baseUrl}/helpdesk`, {
    path: '/ws',
    query: apikey === undefined ? {} : { apikey },
    transports: options.transports ?? ['polling', 'websocket'],
    ...(options.extraHeaders && { extraHeaders: options.extraHeaders }),
    reconnection: false,
    forceNew: true,
  });
  const received: TestSocket['received'] = [];
  const waiters = new Set<{ event: string; match: (p: any) => boolean; resolve: (p: any) => void }>();
  socket.onAny((event: string, payload: unknown) => {
    received.push({ event, payload });
    for (const waiter of waiters) {
      if (waiter.event === event && waiter.match(payload)) {
        waiters.delete(waiter);
        waiter.resolve(payload);
      }
    }
  });
  const handle: TestSocket = {
    socket,
    received,
    next(event, match = () => true, { timeoutMs = 10_000, after = 0 } = {}) {
      const seen = received.slice(after).find((r) => r.event === event && match(r.payload));
      if (seen) return Promise.resolve(seen.payload);
      return new Promise((resolve, reject) => {
        const waiter = { event, match, resolve: (p: any) => (clearTimeout(timer), resolve(p)) };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no ${event} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    ask(event, payload, timeoutMs = 10_000) {
      const timed = socket.timeout(timeoutMs);
      return payload === undefined ? timed.emitWithAck(event) : timed.emitWithAck(event, payload);
    },
    close() {
      socket.close();
    },
  };
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (error) => {
      socket.close();
      reject(error);
    });
  });
  return handle;
}

/** Resolves with the message of the namespace's `connect_error`, and whether the transport stayed open. */
export async function refusal(baseUrl: string, apikey: string | undefined): Promise<{ message: string; transportOpen: boolean }> {
  const socket = io(`${baseUrl}/helpdesk`, { path: '/ws', query: apikey === undefined ? {} : { apikey }, reconnection: false, forceNew: true });
  try {
    return await new Promise((resolve, reject) => {
      socket.once('connect', () => reject(new Error('connected, expected connect_error')));
      socket.once('connect_error', (error) => resolve({ message: error.message, transportOpen: socket.io.engine?.readyState === 'open' }));
    });
  } finally {
    socket.close();
  }
}
