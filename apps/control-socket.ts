import { log } from '../adapters/logging/logger.ts';
import { chmodSync, existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkAdminRequest, type AdminRequest, type AdminResult } from './admin-commands.ts';

/**
 * The local control channel of a process holding the embedded database: a Unix domain socket
 * `control.sock` in DATA_DIR, mode 0600, so only the user who runs the service (and can read
 * DATA_DIR) can connect. The socket is the credential; nothing else is asked.
 *
 * The protocol: one request per connection, one line of JSON (an AdminRequest, at most
 * MAX_CONTROL_REQUEST_BYTES), answered with one line of JSON — `{"ok":true,"result":…}` or
 * `{"ok":false,"error":"…"}` — after which the service closes the connection.
 */
export const CONTROL_SOCKET_FILE = 'control.sock';
export const MAX_CONTROL_REQUEST_BYTES = 16 * 1024;
/** Seconds a connection may take to send its request. */
const REQUEST_TIMEOUT_SECONDS = 10;

export type ControlAnswer = { ok: true; result: AdminResult } | { ok: false; error: string };

export interface ControlSocket {
  path: string;
  /** Stops accepting, waits for the requests under way, removes the socket file. */
  close(): Promise<void>;
}

export function controlSocketPath(dataDir: string): string {
  return join(dataDir, CONTROL_SOCKET_FILE);
}

/**
 * Listens on DATA_DIR's control socket and runs each request through `run`. Only the holder of
 * DATA_DIR's lock calls this, so a socket file already there is a crashed holder's: removed.
 */
export function openControlSocket(dataDir: string, run: (request: AdminRequest) => Promise<AdminResult>): ControlSocket {
  const path = controlSocketPath(dataDir);
  rmSync(path, { force: true });
  const running = new Set<Promise<void>>();
  type State = { received: Uint8Array[]; size: number; answered: boolean };

  const answer = (socket: { end(data: string): unknown }, state: State, reply: ControlAnswer) => {
    state.answered = true;
    socket.end(`${JSON.stringify(reply)}\n`);
  };
  const refuse = (error: unknown): ControlAnswer => ({ ok: false, error: error instanceof Error ? error.message : String(error) });

  // The socket file is created with the process's umask; 0177 makes it 0600 from its first moment.
  const umask = process.umask(0o177);
  let listener;
  try {
    listener = Bun.listen<State>({
      unix: path,
      socket: {
        open(socket) {
          socket.data = { received: [], size: 0, answered: false };
          socket.timeout(REQUEST_TIMEOUT_SECONDS);
        },
        data(socket, chunk) {
          const state = socket.data;
          if (state.answered) return; // one request per connection: what follows it is ignored
          const newline = chunk.indexOf(0x0a);
          const part = newline < 0 ? chunk : chunk.subarray(0, newline);
          state.size += part.byteLength;
          if (state.size > MAX_CONTROL_REQUEST_BYTES) {
            answer(socket, state, { ok: false, error: `request must be at most ${MAX_CONTROL_REQUEST_BYTES} bytes` });
            return;
          }
          state.received.push(new Uint8Array(part));
          if (newline < 0) return;
          state.answered = true;
          socket.timeout(0);
          const line = Buffer.concat(state.received).toString('utf8');
          const work = (async () => {
            let reply: ControlAnswer;
            let command = 'request';
            try {
              let parsed: unknown;
              try {
                parsed = JSON.parse(line);
              } catch {
                throw new Error('request must be one line of JSON');
              }
              const request = checkAdminRequest(parsed);
              command = request.command;
              reply = { ok: true, result: await run(request) };
              log.info({ command: request.command }, `Control socket: ${request.command} done`);
            } catch (error) {
              reply = refuse(error);
              log.warn({ command }, `Control socket: ${command} refused or failed`);
            }
            // The line just logged is written right after this turn (adapters/logging/logger.ts):
            // answer after it, so whoever reads the log on the answer finds the line there.
            await new Promise((resolve) => setImmediate(resolve));
            socket.end(`${JSON.stringify(reply)}\n`);
          })();
          running.add(work);
          void work.finally(() => running.delete(work));
        },
        timeout(socket) {
          if (!socket.data.answered) answer(socket, socket.data, { ok: false, error: 'no request received in time' });
        },
        error() {},
      },
    });
    chmodSync(path, 0o600);
  } finally {
    process.umask(umask);
  }
  const server = listener;
  const made = statSync(path).ino;
  return {
    path,
    async close() {
      server.stop();
      await Promise.allSettled([...running]);
      // Only the file this listener made (another service of this process may have replaced it).
      if (inode(path) === made) rmSync(path, { force: true });
    },
  };
}

function inode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/** How long the CLI waits for the running service's answer (a password hash takes about a second). */
export const CONTROL_ANSWER_TIMEOUT_MS = 30_000;
/** How long it waits for a backup, which writes the whole database. */
export const CONTROL_BACKUP_TIMEOUT_MS = 30 * 60_000;

/**
 * Sends one request to the process holding DATA_DIR; answers its reply, or undefined when no
 * process listens there (no socket file, or nobody accepting on it). A service that accepted
 * the request but does not answer in time gets a clear failure, not a hung command.
 */
export async function sendControlRequest(dataDir: string, request: AdminRequest, timeoutMs = CONTROL_ANSWER_TIMEOUT_MS): Promise<ControlAnswer | undefined> {
  const path = controlSocketPath(dataDir);
  if (!existsSync(path)) return undefined;
  const { promise, resolve } = Promise.withResolvers<string | undefined>();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const received: Uint8Array[] = [];
  try {
    const socket = await Bun.connect({
      unix: path,
      socket: {
        data(_socket, chunk) {
          received.push(new Uint8Array(chunk));
        },
        close() {
          resolve(received.length ? Buffer.concat(received).toString('utf8') : undefined);
        },
        error() {
          resolve(undefined);
        },
      },
    });
    socket.write(`${JSON.stringify(request)}\n`);
    socket.flush();
    timer = setTimeout(() => {
      timedOut = true;
      resolve(undefined);
      socket.end();
    }, timeoutMs);
  } catch {
    return undefined;
  }
  const text = await promise;
  clearTimeout(timer);
  if (timedOut) return { ok: false, error: `The running service took the command but did not answer within ${Math.round(timeoutMs / 1000)} s; check its output` };
  if (!text) return undefined;
  try {
    const reply = JSON.parse(text.split('\n')[0]!) as ControlAnswer;
    return typeof reply === 'object' && reply !== null && typeof reply.ok === 'boolean' ? reply : undefined;
  } catch {
    return undefined;
  }
}
