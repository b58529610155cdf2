import type { RealtimeServer } from './hub.ts';

/**
 * The event a stopping server sends each of its sockets, on every namespace, right before it
 * closes them: `{ reconnect: true, retryAfterMs }`. The connection then closes at the transport
 * (socket.io-client's reason `transport close`, after which it reconnects on its own by default);
 * a client that reads the notice reconnects after `retryAfterMs`, which a load balancer sends to
 * another server process.
 */
export const SERVER_SHUTDOWN = 'server.shutdown';

export interface ShutdownNotice {
  reconnect: true;
  retryAfterMs: number;
}

/** Reconnections spread over this window, so a server's clients do not all land in one instant. */
const RETRY_AFTER_MIN_MS = 1_000;
const RETRY_AFTER_SPREAD_MS = 2_000;
/** How long the notices may take to leave (a long-polling client takes its on its next poll). */
const FLUSH_WAIT_MS = 1_000;

/**
 * Tells this process's sockets (never other processes': a local emit, not through the adapter)
 * that the server stops, and resolves once the notices have left or FLUSH_WAIT_MS has passed.
 * Returns how many sockets were told.
 */
export async function announceShutdown(io: RealtimeServer, random: () => number = Math.random): Promise<number> {
  const sockets = [...io._nsps.values()].flatMap((namespace) => [...namespace.sockets.values()]);
  for (const socket of sockets) {
    const notice: ShutdownNotice = { reconnect: true, retryAfterMs: RETRY_AFTER_MIN_MS + Math.floor(random() * RETRY_AFTER_SPREAD_MS) };
    socket.emit(SERVER_SHUTDOWN, notice);
  }
  const deadline = Date.now() + FLUSH_WAIT_MS;
  // Engine.IO keeps a packet in its connection's write buffer until the transport took it (the
  // field is not in its types, hence the cast).
  const waiting = () => sockets.some((socket) => socket.connected && (socket.conn as unknown as { writeBuffer: unknown[] }).writeBuffer.length > 0);
  while (waiting() && Date.now() < deadline) await Bun.sleep(10);
  return sockets.length;
}
