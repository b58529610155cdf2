import type { DomainError, DomainErrorKind } from '../../core/shared/errors.ts';

/**
 * The HTTP status of each kind of domain failure: the one place where core's words become
 * statuses. Every answer built from a DomainError (the error bodies, OAuth answers and pages,
 * MCP tool errors) takes its status from here.
 */
export const HTTP_STATUS_OF_KIND = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  upstream_failed: 502,
  upstream_unavailable: 503,
} as const satisfies Record<DomainErrorKind, number>;

export function httpStatusOf(error: DomainError): number {
  return HTTP_STATUS_OF_KIND[error.kind];
}
