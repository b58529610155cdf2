import { DriverError } from '../../../core/connections/driver.ts';
import type { GraphErrorBody } from './graph-types.ts';

/**
 * Graph API failures as `DriverError`s. The Cloud API documentation asks clients to branch
 * on `error.code` (not on the HTTP status, nor on the deprecated `error_subcode`), so the
 * code decides what is retryable; the HTTP status only decides for bodies without a code.
 */

/** Codes that clear on their own: throttling, transient platform trouble. */
export const RETRYABLE_CODES: ReadonlySet<number> = new Set([
  1, // API Unknown: invalid request or possible server error
  2, // API Service: temporary downtime or overload
  4, // API Too Many Calls: app-level rate limit
  80007, // WhatsApp Business Account rate limit
  130429, // Rate limit hit: Cloud API throughput reached
  131000, // Something went wrong
  131016, // Service unavailable
  131056, // (Business account, consumer account) pair rate limit hit
  133004, // Server temporarily unavailable
]);

/** Codes that mean the credentials no longer work: the connection is logged out. */
export const AUTH_CODES: ReadonlySet<number> = new Set([
  0, // AuthException
  190, // Access token has expired / invalid OAuth access token
]);

/** Re-engagement message: more than 24 h since the contact's last message (spec 3.4, 6.1). */
export const WINDOW_CLOSED_CODE = 131047;

export function isAuthError(error: DriverError): boolean {
  return typeof error.code === 'number' && AUTH_CODES.has(error.code);
}

/** Turns a non-2xx Graph answer into a `DriverError`, reading the documented error body. */
export async function graphError(response: Response, action: string): Promise<DriverError> {
  const text = await response.text().catch(() => '');
  let body: Partial<GraphErrorBody> | undefined;
  try {
    body = text ? (JSON.parse(text) as Partial<GraphErrorBody>) : undefined;
  } catch {
    body = undefined;
  }
  const error = body && typeof body.error === 'object' && body.error !== null ? body.error : undefined;
  if (error && typeof error.code === 'number') {
    const details = error.error_data?.details;
    const message = [error.message ?? `Graph API error ${error.code}`, details && details !== error.message ? details : undefined]
      .filter(Boolean)
      .join(': ');
    const retryable = RETRYABLE_CODES.has(error.code) || response.status >= 500 || response.status === 429;
    return new DriverError(`${action} failed: ${message}`, error.code, retryable);
  }
  const retryable = response.status >= 500 || response.status === 429 || response.status === 408;
  const snippet = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new DriverError(`${action} failed: HTTP ${response.status}${snippet ? ` ${snippet}` : ''}`, `HTTP_${response.status}`, retryable);
}

/**
 * A request that never got an answer (DNS, refused connection, reset, timeout): retryable. Unless
 * the connection was never made, the request may have reached the platform: `unanswered`.
 */
export function networkError(cause: unknown, action: string): DriverError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const timeout = cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError');
  const code = String((cause as { code?: unknown } | undefined)?.code ?? '');
  return new DriverError(`${action} failed: ${reason}`, timeout ? 'TIMEOUT' : 'NETWORK', true, !NEVER_CONNECTED.has(code));
}

/** Failures (Node's and Bun's spellings) before any byte of the request left: it cannot have arrived. */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ConnectionRefused', 'ENOTFOUND', 'EAI_AGAIN', 'FailedToOpenSocket', 'ERR_INVALID_URL']);
