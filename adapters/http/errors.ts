import { DomainError } from '../../core/shared/errors.ts';
import { OAuthError } from '../../core/oauth/errors.ts';
import { TooManyRequests } from './rate-limit.ts';

/** A failure whose whole answer is already built (a challenge with its headers, say). */
export class HttpResponseError extends Error {
  constructor(readonly response: Response) {
    super(`HTTP ${response.status}`);
  }
}

/** Spec 7.2 shape 3: exactly `{ error, error_description }`; never cached. */
export function oauthResponse(error: OAuthError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: error.code, error_description: capMessage(error.description) }), {
    status: error.status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });
}

/**
 * The one place where failures become HTTP bodies (spec 7.2): the standard shape
 * `{ statusCode, message, error }` and the coded shape `{ message, hint }`.
 * Anything unexpected is logged (never with request secrets) and answered as a plain 500.
 */
export function errorResponse(code: string | number, error: unknown): Response {
  if (error instanceof HttpResponseError) return error.response;
  if (error instanceof TooManyRequests) {
    const response = standard(429, error.message);
    response.headers.set('retry-after', String(error.retryAfterSeconds));
    return response;
  }
  if (error instanceof OAuthError) return oauthResponse(error);
  if (error instanceof DomainError) {
    if (error.shape === 'coded') return json(error.status, { message: capMessage(error.message), hint: capMessage(error.hint ?? '') });
    return standard(error.status, error.messages ?? error.message);
  }
  switch (code) {
    case 'VALIDATION':
      return validation(error);
    case 'PARSE': {
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof DomainError) return errorResponse(code, cause);
      return standard(400, 'Request body is not valid JSON or does not match its content type');
    }
    case 'NOT_FOUND':
      return standard(404, 'Cannot find this route');
    case 'INVALID_COOKIE_SIGNATURE':
      return standard(400, 'Invalid cookie signature');
  }
  const status = statusOf(error);
  if (status && status < 500) return standard(status, error instanceof Error ? error.message : String(error));
  console.error('[http] unexpected error:', error instanceof Error ? error.stack ?? error.message : error);
  return standard(500, 'Internal server error');
}

export function standard(status: number, message: string | string[]): Response {
  const capped = Array.isArray(message) ? message.slice(0, MAX_MESSAGES).map(capMessage) : capMessage(message);
  return json(status, { statusCode: status, message: capped, error: STATUS_TEXT[status] ?? 'Error' });
}

/**
 * Messages may quote what the caller sent (a name, a value a schema refused): a long input is
 * quoted as a prefix, so an error body stays small whatever the request carried.
 */
const MAX_MESSAGE_CHARS = 300;
const MAX_MESSAGES = 20;
function capMessage(message: string): string {
  return message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS)}…`;
}

/** One message per broken rule, naming the field (`body.name: ...`). */
function validation(error: unknown): Response {
  const v = error as { type?: string; all?: Array<{ path?: string; message?: string; summary?: string; schema?: { error?: string } }>; message?: string };
  // A response that does not match its own schema is our bug, not the caller's.
  if (v.type === 'response') {
    console.error('[http] response failed its schema:', v.message);
    return standard(500, 'Internal server error');
  }
  const where = v.type === 'query' ? 'query' : v.type === 'params' ? 'params' : v.type === 'headers' ? 'headers' : 'body';
  const messages = [
    ...new Set(
      (v.all ?? []).map((issue) => {
        const field = issue.path ? `${where}${issue.path.replace(/\//g, '.')}` : where;
        if (issue.schema?.error) return `${field} ${issue.schema.error}`;
        return `${field}: ${issue.summary ?? issue.message ?? 'is invalid'}`;
      }),
    ),
  ];
  return standard(400, messages.length > 0 ? messages : [`${where} is invalid`]);
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown })?.status;
  return typeof status === 'number' ? status : undefined;
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

export const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
};
