/**
 * Expected failures of the domain. The HTTP adapter turns each into one of the spec's
 * body shapes (7.2) in a single place, so use cases never think about HTTP bodies.
 *
 * - `standard`: `{ statusCode, message, error }`; `message` may be a list (validation).
 * - `coded`:    `{ message: <MACHINE_CODE>, hint }`; clients branch on the code.
 * - `oauth`:    `{ error, error_description }` (see core/oauth/errors.ts).
 */
export type ErrorShape = 'standard' | 'coded' | 'oauth';

/**
 * What went wrong, in the domain's words. The list is closed: each kind is a distinct answer
 * a caller can act on, and the HTTP adapter gives each its status in one table
 * (adapters/http/error-status.ts); core never names a status.
 */
export const DOMAIN_ERROR_KINDS = [
  /** The request breaks a rule of its own shape or values (a field missing, out of range). */
  'invalid_input',
  /** No caller is known: no credential, or one that is unknown, expired or revoked. */
  'unauthenticated',
  /** The caller is known but may not do this. */
  'forbidden',
  /** The thing named does not exist (or is not visible to this caller). */
  'not_found',
  /** The request collides with the current state (a duplicate, a transition not allowed now). */
  'conflict',
  /** More bytes than a limit allows (a body, a media file). */
  'too_large',
  /** Well-formed, but the state of the world does not allow it (a disconnected connection, a closed window). */
  'unprocessable',
  /** The caller asked too often; retry later. */
  'rate_limited',
  /** A service we depend on (the chat network, an AI provider) failed or refused to answer. */
  'upstream_failed',
  /** A service we depend on is unavailable for now; retry later. */
  'upstream_unavailable',
] as const;

export type DomainErrorKind = (typeof DOMAIN_ERROR_KINDS)[number];

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string | string[],
    readonly shape: ErrorShape = 'standard',
    /** Human text that accompanies a machine code (coded shape only). */
    readonly hint?: string,
  ) {
    super(Array.isArray(message) ? message.join('; ') : message);
    this.name = 'DomainError';
    this.messages = Array.isArray(message) ? message : undefined;
  }

  /** Set when the error carries one message per broken rule. */
  readonly messages: string[] | undefined;
}

export const badRequest = (message: string | string[]) => new DomainError('invalid_input', message);
export const unauthorized = (message = 'Invalid or missing API key') => new DomainError('unauthenticated', message);
export const forbidden = (message = 'Insufficient account permissions') => new DomainError('forbidden', message);
export const notFound = (message: string) => new DomainError('not_found', message);
export const conflict = (message: string) => new DomainError('conflict', message);
export const unprocessable = (message: string) => new DomainError('unprocessable', message);
export const coded = (kind: DomainErrorKind, code: string, hint: string) => new DomainError(kind, code, 'coded', hint);

/**
 * Runs one check of a request and, when it fails with invalid input, adds its messages to `problems`
 * instead of stopping: a request's broken rules are all reported at once (spec 7.2).
 */
export function collectProblems<T>(problems: string[], check: () => T): T | undefined {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof DomainError) || error.kind !== 'invalid_input' || error.shape !== 'standard') throw error;
    problems.push(...(error.messages ?? [error.message]));
    return undefined;
  }
}

/** At most `max` characters of an input value, for quoting it in an error message (a 10 MB name is not echoed back). */
export function excerpt(value: string, max = 60): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
