import pino from 'pino';
import { writeSync } from 'node:fs';
import { prettyLine } from './pretty.ts';

/**
 * The service's logger: one JSON object a line (`level`, `time`, `msg` and fields), or a
 * readable line when a terminal is attached. Fields name things (ids, routes, statuses, counts),
 * never a secret or a message's content; the keys below are blanked as a second line of defence.
 */
export type Logger = pino.Logger;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

const REDACTED_KEYS = new Set(['password', 'token', 'apikey', 'authorization', 'cookie', 'secret', 'body', 'text', 'content']);
const CENSOR = '[redacted]';

/**
 * A line's fields with the keys above blanked, at the top and one level down (`token`,
 * `request.token`); the caller's object is never changed. Checked here rather than by pino's
 * `redact`, which parsed its paths again on every line: an access line per request made that a
 * visible share of a busy server's time.
 */
export function censored(fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    const replacement = REDACTED_KEYS.has(key) ? CENSOR : isPlainObject(value) ? censoredOneLevel(value) : value;
    if (replacement === value) continue;
    if (out === fields) out = { ...fields };
    out[key] = replacement;
  }
  return out;
}

function censoredOneLevel(fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields;
  for (const key of Object.keys(fields)) {
    if (!REDACTED_KEYS.has(key)) continue;
    if (out === fields) out = { ...fields };
    out[key] = CENSOR;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Error);
}

/** Where lines go: standard output for the service's processes, standard error for the CLI (its answer is on stdout). */
let targetFd = 1;
const destinations = new Map<number, pino.DestinationStream>();

function destination(fd: number): pino.DestinationStream {
  let stream = destinations.get(fd);
  if (!stream) {
    stream = gatheredOutput(fd);
    destinations.set(fd, stream);
  }
  return stream;
}

/**
 * Lines gathered for a short while (`GATHER_MS`) and written together with one system call (a
 * write per line took a busy server a twentieth of its time, and a write after every turn of its
 * event loop still a thirtieth; sonic-boom's own synchronous flush also asks for an fsync each
 * time, a disk flush when the output is a file). Whatever is left is written when the process
 * exits, crash exits included.
 */
function gatheredOutput(fd: number): pino.DestinationStream {
  let lines: string[] = [];
  let length = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (lines.length === 0) return;
    const bytes = Buffer.from(lines.join(''), 'utf8');
    lines = [];
    length = 0;
    writeAll(fd, bytes);
  };
  process.on('exit', flush);
  return {
    write(line: string) {
      lines.push(line);
      length += line.length;
      // A busy server's lines go out in blocks of about 16 KiB as they come, not all at the end.
      if (length >= BLOCK) return flush();
      // Unreferenced: pending lines never keep an idle process alive; its exit writes them.
      timer ??= setTimeout(flush, GATHER_MS).unref();
    },
  };
}

/** Writes every byte, waiting out a full pipe; output nobody can take any more (a closed pipe) is dropped. */
function writeAll(fd: number, bytes: Uint8Array): void {
  for (let written = 0; written < bytes.length; ) {
    try {
      written += writeSync(fd, bytes, written);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN' && code !== 'EBUSY') return;
      Atomics.wait(PAUSE, 0, 0, 10);
    }
  }
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));
const BLOCK = 16_384;
const GATHER_MS = 20;

/** The stream a logger writes to: follows `logToStandardError`, and formats for people on a terminal. */
function outputStream(pretty: boolean | undefined): pino.DestinationStream {
  return {
    write(line: string) {
      const readable = pretty ?? Boolean(targetFd === 2 ? process.stderr.isTTY : process.stdout.isTTY);
      destination(targetFd).write(readable ? prettyLine(line, { color: true }) : line);
    },
  };
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Readable lines instead of JSON; unset, readable exactly when the output is a terminal. */
  pretty?: boolean;
  /** Takes the JSON lines instead of the process's output (tests). */
  stream?: pino.DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), bindings: (fields) => (fields ? censored(fields) : {}), log: censored },
    },
    options.stream ?? outputStream(options.pretty),
  );
}

/** `LOG_LEVEL` as the process was given it; an unknown value is refused by apps/config.ts before anything logs. */
function levelOf(raw: string | undefined): LogLevel {
  const value = raw?.trim().toLowerCase() ?? '';
  return isLogLevel(value) ? value : 'info';
}

/**
 * The process's logger (`LOG_LEVEL`, default `info`), for the few pieces that run with no
 * context (pools, loops, the queue's events). Features log through their context's (`ctx.log`,
 * made by the runtime from the same setting), which tests may quiet or capture.
 */
export const log: Logger = createLogger({ level: levelOf(process.env.LOG_LEVEL) });

/** For the CLI, whose standard output is its answer: log lines go to standard error instead. */
export function logToStandardError(): void {
  targetFd = 2;
}

/** An error as a log field: its message, and its stack when `withStack` (unexpected failures). */
export function errorField(error: unknown, withStack = false): { message: string; stack?: string } {
  if (!(error instanceof Error)) return { message: String(error) };
  return withStack && error.stack ? { message: error.message, stack: error.stack } : { message: error.message };
}
