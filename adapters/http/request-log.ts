import type { AppContext } from './context.ts';
import type { Logger } from '../logging/logger.ts';

/**
 * Request ids and the access log. Every answer carries `X-Request-Id`: the caller's, when it is a
 * sane token, else a new one; the log lines of a request carry the same id. One access line per
 * request: method, route template (never the path with its ids, never the query string, which may
 * hold a token), status, duration and, once authenticated, the workspace. No header, cookie or
 * body is ever logged.
 */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Bounded and plain: a caller's id is echoed into headers and logs, so nothing that could break either. */
const ACCEPTED_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;

interface RequestRecord {
  id: string;
  startedAt: number;
  workspaceId?: string;
  status?: number;
}

const records = new WeakMap<Request, RequestRecord>();

/** The id a request is known by: the caller's `X-Request-Id` when acceptable, else a fresh UUID. */
export function requestIdFor(header: string | null): string {
  return header !== null && ACCEPTED_ID.test(header) ? header : crypto.randomUUID();
}

/** Authentication names the workspace a request acts in, for its access line. */
export function noteWorkspace(request: Request, workspaceId: string): void {
  const record = records.get(request);
  if (record) record.workspaceId = workspaceId;
}

/** The logger of one request: its lines carry the request id. */
export function requestLogger(log: Logger, request: Request): Logger {
  const record = records.get(request);
  return record ? log.child({ requestId: record.id }) : log;
}

type HeaderSet = { headers: Record<string, string | number> };

/** First `onRequest` hook: gives the request its id and puts it on whatever the answer will be (Elysia merges `set.headers`, errors included). */
export function beginRequest({ request, set }: { request: Request; set: HeaderSet }): void {
  const id = requestIdFor(request.headers.get(REQUEST_ID_HEADER));
  records.set(request, { id, startedAt: performance.now() });
  set.headers[REQUEST_ID_HEADER] = id;
}

/** The status an error hook answered with (the after-response hook does not see it for unmatched routes). */
export function noteStatus(request: Request, status: number): void {
  const record = records.get(request);
  if (record) record.status = status;
}

/**
 * An `onRequest` hook that may answer by itself (a refused body size, a CORS preflight): Elysia
 * then runs no later hook, so its access line is written here.
 */
export function answeringEarly(ctx: AppContext, hook: (context: EarlyContext) => Response | undefined) {
  // Destructured, not passed on whole: Elysia reads a hook's source and, for a context passed
  // to another function, parses every request's cookies and query in case they are wanted.
  return ({ request, set }: EarlyContext): Response | undefined => {
    const response = hook({ request, set });
    if (response) writeAccessLine(ctx.log, request, undefined, response.status);
    return response;
  };
}

/** What an early hook (`answeringEarly`) may read and set. */
export interface EarlyContext {
  request: Request;
  set: HeaderSet;
}

/** The `onAfterResponse` hook: the request's access line. */
export function finishRequest(ctx: AppContext) {
  return ({ request, route, response, set }: { request: Request; route?: string; response?: unknown; set: { status?: unknown } }): void => {
    const status = records.get(request)?.status ?? (response instanceof Response ? response.status : typeof set.status === 'number' ? set.status : 200);
    writeAccessLine(ctx.log, request, route || undefined, status);
  };
}

function writeAccessLine(log: Logger, request: Request, route: string | undefined, status: number): void {
  const record = records.get(request);
  if (!record) return;
  records.delete(request);
  log.info(
    {
      requestId: record.id,
      method: request.method,
      route,
      status,
      durationMs: Math.round((performance.now() - record.startedAt) * 10) / 10,
      workspaceId: record.workspaceId,
    },
    'request',
  );
}
