/**
 * Expected failures of the domain. The HTTP adapter turns each into one of the spec's
 * body shapes (7.2) in a single place, so use cases never think about HTTP bodies.
 *
 * - `standard`: `{ statusCode, message, error }`; `message` may be a list (validation).
 * - `coded`:    `{ message: <MACHINE_CODE>, hint }`; clients branch on the code.
 * - `oauth`:    `{ error, error_description }` (see core/oauth/errors.ts).
 */
export type ErrorShape = 'standard' | 'coded' | 'oauth';

export class DomainError extends Error {
  constructor(
    readonly status: number,
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

export const badRequest = (message: string | string[]) => new DomainError(400, message);
export const unauthorized = (message = 'Invalid or missing API key') => new DomainError(401, message);
export const forbidden = (message = 'Insufficient account permissions') => new DomainError(403, message);
export const notFound = (message: string) => new DomainError(404, message);
export const conflict = (message: string) => new DomainError(409, message);
export const unprocessable = (message: string) => new DomainError(422, message);
export const coded = (status: number, code: string, hint: string) => new DomainError(status, code, 'coded', hint);

/**
 * Runs one check of a request and, when it fails with a 400, adds its messages to `problems`
 * instead of stopping: a request's broken rules are all reported at once (spec 7.2).
 */
export function collectProblems<T>(problems: string[], check: () => T): T | undefined {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof DomainError) || error.status !== 400 || error.shape !== 'standard') throw error;
    problems.push(...(error.messages ?? [error.message]));
    return undefined;
  }
}

/** At most `max` characters of an input value, for quoting it in an error message (a 10 MB name is not echoed back). */
export function excerpt(value: string, max = 60): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
