import type { Server } from 'bun';
import type { Logger } from '../../adapters/logging/logger.ts';

/** How long requests in flight at the stop may take to finish before they are cut. */
export const HTTP_CLOSE_TIMEOUT_MS = 10_000;

/**
 * Closes the HTTP server without losing the requests it is answering: it stops listening at
 * once (a new connection is refused), idle keep-alive connections close, requests in flight
 * finish and get their answers, and `closeWebsockets` closes the long-lived connections (Socket.IO),
 * which would otherwise hold the stop open. What is still open after `timeoutMs` is cut.
 */
export async function closeHttpServer(
  server: Server<unknown>,
  closeWebsockets: () => Promise<void>,
  log: Logger,
  timeoutMs = HTTP_CLOSE_TIMEOUT_MS,
): Promise<void> {
  const closed = server.stop(false);
  await closeWebsockets();
  const finished = await Promise.race([closed.then(() => true), Bun.sleep(timeoutMs).then(() => false)]);
  if (finished) return;
  log.warn({ pendingRequests: server.pendingRequests, pendingWebSockets: server.pendingWebSockets, timeoutMs }, 'requests still open at the stop timeout; closing them');
  await server.stop(true);
}
