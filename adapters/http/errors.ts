import { DomainError } from '../../core/shared/errors.ts';
import { OAuthError } from '../../core/oauth/errors.ts';
import { httpStatusOf } from './error-status.ts';
import { TooManyRequests } from './rate-limit.ts';
import { errorField, log as processLog, type Logger } from '../logging/logger.ts';

/** A failure whose whole answer is already built (a challenge with its headers, say). */
export class HttpResponseError extends Error {
  constructor(readonly response: Response) {
    super(`HTTP ${response.status}`);
  }
}

/** Spec 7.2 shape 3: exactly `{ error, error_description }`; never cached. */
export function oauthResponse(error: OAuthError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: error.code, error_description: capMessage(error.description) }), {
    status: httpStatusOf(error),
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });
}

/**
 * The one place where failures become HTTP bodies (spec 7.2): the standard shape
 * `{ statusCode, message, error }` and the coded shape `{ message, hint }`.
 * Anything unexpected is logged (never with request secrets) and answered as a plain 500.
 */
export function errorResponse(code: string | number, error: unknown, log: Logger = processLog): Response {
  if (error instanceof HttpResponseError) return error.response;
  if (error instanceof TooManyRequests) {
    const response = standard(httpStatusOf(error), error.message);
    response.headers.set('retry-after', String(error.retryAfterSeconds));
    return response;
  }
  if (error instanceof OAuthError) return oauthResponse(error);
  if (error instanceof DomainError) {
    const status = httpStatusOf(error);
    if (error.shape === 'coded') return json(status, { message: capMessage(error.message), hint: capMessage(error.hint ?? '') });
    return standard(status, error.messages ?? error.message);
  }
  switch (code) {
    case 'VALIDATION':
      return validation(error, log);
    case 'PARSE': {
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof DomainError) return errorResponse(code, cause, log);
      return standard(400, 'Request body is not valid JSON or does not match its content type');
    }
    case 'NOT_FOUND':
      return standard(404, 'Cannot find this route');
    case 'INVALID_COOKIE_SIGNATURE':
      return standard(400, 'Invalid cookie signature');
  }
  const status = statusOf(error);
  if (status && status < 500) return standard(status, error instanceof Error ? error.message : String(error));
  log.error({ error: errorField(error, true) }, 'unexpected error');
  return standard(500, 'Internal server error');
}

/**
 * A 400 always answers `message` as a list, one entry per broken rule (spec 7.2), whoever
 * raised it (a schema, core, a body reader); other statuses keep the text they were given.
 */
export function standard(status: number, message: string | string[]): Response {
  if (status === 400 && !Array.isArray(message)) message = [message];
  if (status === 400 && message.length === 0) message = ['The request is invalid'];
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

/** One message per broken rule, naming the field the caller sent (`body.name ...`, `query.limit ...`). */
function validation(error: unknown, log: Logger): Response {
  const v = error as { type?: string; all?: ValidationIssue[]; message?: string };
  // A response that does not match its own schema is our bug, not the caller's.
  if (v.type === 'response') {
    log.error({ error: { message: v.message } }, 'response failed its schema');
    return standard(500, 'Internal server error');
  }
  const where = v.type === 'query' ? 'query' : v.type === 'params' ? 'params' : v.type === 'headers' ? 'headers' : v.type === 'cookie' ? 'cookie' : 'body';
  const messages = [...new Set((v.all ?? []).map((issue) => issueMessage(where, issue)))];
  return standard(400, messages.length > 0 ? messages : [`${where} is invalid`]);
}

interface ValidationIssue {
  path?: string;
  value?: unknown;
  message?: string;
  summary?: string;
  schema?: SchemaLike;
}

interface SchemaLike {
  type?: string | string[];
  error?: string;
  anyOf?: SchemaLike[];
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  [key: string]: unknown;
}

/**
 * `body.messageGroupDelay must be an integer from 1 to 300, or null`: the field as the caller
 * wrote it and what the schema wants, in words. A route's own `error` text wins; a shape the
 * describer does not know keeps the validator's summary.
 */
function issueMessage(where: string, issue: ValidationIssue): string {
  const field = issue.path ? `${where}${issue.path.replace(/\//g, '.')}` : where;
  if (issue.schema?.error) return `${field} ${issue.schema.error}`;
  const wanted = issue.schema ? describeSchema(issue.schema) : undefined;
  if (wanted && issue.value === undefined) return `${field} is required; it must be ${wanted}`;
  if (wanted) return `${field} must be ${wanted}`;
  const reason = (issue.summary ?? issue.message ?? 'is invalid').replace(/^Property '[^']*' /, '').replace(/^Expected property '[^']*' to be/, 'expected');
  return `${field}: ${reason}`;
}

/** What a schema accepts, in words; undefined for shapes too rich to say in a line. */
function describeSchema(schema: SchemaLike): string | undefined {
  if (schema.anyOf) {
    // Elysia adds a `string` variant with a format to coerce numbers and booleans sent as text.
    const coercion = (s: SchemaLike) => s.type === 'string' && ['integer', 'numeric', 'boolean', 'ObjectString', 'ArrayString'].includes(String(s.format));
    const variants = schema.anyOf.filter((s) => s.type !== 'undefined' && !coercion(s));
    if (variants.length > 0 && variants.every((s) => s.const !== undefined)) return `one of ${variants.map((s) => JSON.stringify(s.const)).join(', ')}`;
    const words = variants.map(describeSchema);
    if (words.length === 0 || words.some((w) => w === undefined)) return undefined;
    return words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
  }
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return `one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  switch (schema.type) {
    case 'integer':
    case 'number':
      return `${schema.type === 'integer' ? 'an integer' : 'a number'}${range(schema.minimum ?? schema.exclusiveMinimum, schema.maximum ?? schema.exclusiveMaximum)}`;
    case 'string': {
      const format = schema.format ? ` in ${schema.format} format` : '';
      const length = lengthRange(schema.minLength, schema.maxLength, 'character');
      return `a string${format}${length}`;
    }
    case 'boolean':
      return 'a boolean (true or false)';
    case 'null':
      return 'null';
    case 'array':
      return `an array${lengthRange(schema.minItems, schema.maxItems, 'item')}`;
    case 'object':
      return 'an object';
  }
  return undefined;
}

function range(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` of at most ${max}`;
  return '';
}

function lengthRange(min: number | undefined, max: number | undefined, unit: string): string {
  if (min !== undefined && max !== undefined) return min === max ? ` of exactly ${min} ${unit}s` : ` of ${min} to ${max} ${unit}s`;
  if (min !== undefined && min > 0) return ` of at least ${min} ${unit}${min === 1 ? '' : 's'}`;
  if (max !== undefined) return ` of at most ${max} ${unit}s`;
  return '';
}

/** The status a framework error carries (Elysia's own); DomainErrors take theirs from the kind table (error-status.ts). */
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
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
};
