/**
 * The console's only way to the service: the public `/v3` API with the sign-in session cookie.
 * Every write carries the session's CSRF token (`X-CSRF-Token`); every call names the selected
 * workspace (`X-Account-Id`). Errors keep the spec's shape (`statusCode`, `message`).
 */

/** An answer other than 2xx, with the service's messages (always a list here). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly messages: string[],
    readonly body: unknown,
  ) {
    super(messages.join('; ') || `The service answered ${status}`);
  }
}

interface Credentials {
  csrfToken: string;
  workspaceId: string;
}

let credentials: Credentials | undefined;

/** Set once `GET /v3/session` answered, and again when the workspace changes. */
export function useCredentials(next: Credentials): void {
  credentials = next;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface CallOptions {
  query?: Query;
  /** A body that is not JSON (an upload); sent as is with its own content type. */
  raw?: { body: Blob | string; contentType: string };
  /** Headers of the call itself (an upload's `X-File-Name`). */
  headers?: Record<string, string>;
  /** Leave out `X-Account-Id` (the first `GET /v3/session`, before a workspace is chosen). */
  noWorkspace?: boolean;
}

export async function api<T = unknown>(method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (credentials && !options.noWorkspace) headers['x-account-id'] = credentials.workspaceId;
  if (method !== 'GET' && method !== 'HEAD' && credentials) headers['x-csrf-token'] = credentials.csrfToken;
  let payload: BodyInit | undefined;
  if (options.raw) {
    headers['content-type'] = options.raw.contentType;
    payload = options.raw.body;
  } else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const response = await fetch(withQuery(path, options.query), { method, headers, body: payload, credentials: 'same-origin' });
  if (response.status === 401) signInAgain();
  const text = await response.text();
  const parsed = text ? parseJson(text) : undefined;
  if (!response.ok) throw new ApiError(response.status, messagesOf(parsed, response), parsed);
  return parsed as T;
}

export const get = <T = unknown>(path: string, query?: Query) => api<T>('GET', path, undefined, { query });
export const post = <T = unknown>(path: string, body?: unknown) => api<T>('POST', path, body ?? {});
export const patch = <T = unknown>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const put = <T = unknown>(path: string, body: unknown) => api<T>('PUT', path, body);
export const del = <T = unknown>(path: string) => api<T>('DELETE', path);

/** A list endpoint's items, whether it answers a bare array or the pagination envelope. */
export function itemsOf<T>(answer: unknown): T[] {
  if (Array.isArray(answer)) return answer as T[];
  if (answer && typeof answer === 'object') {
    for (const key of ['data', 'items', 'records']) {
      const value = (answer as Record<string, unknown>)[key];
      if (Array.isArray(value)) return value as T[];
    }
  }
  return [];
}

/** The session ended (expired, signed out elsewhere, removed): back to the sign-in page, then here. */
export function signInAgain(): void {
  const here = `${location.pathname}${location.search}${location.hash}`;
  location.assign(`/signin?return_to=${encodeURIComponent(here)}`);
}

function withQuery(path: string, query: Query | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function messagesOf(body: unknown, response: Response): string[] {
  if (body && typeof body === 'object') {
    const { message, hint, error_description: description } = body as Record<string, unknown>;
    // A coded refusal (`USER_PLAN_EXCEEDED_CONNECTIONS`) reads as its hint, with the code after it.
    if (typeof message === 'string' && typeof hint === 'string') return [`${hint} (${message})`];
    if (Array.isArray(message)) return message.map(String);
    if (typeof message === 'string') return [message];
    if (typeof description === 'string') return [description];
  }
  return [`The service answered ${response.status} ${response.statusText}`];
}
