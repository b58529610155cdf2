import { DriverError, type PlatformRequest } from '../../../core/connections/driver.ts';
import type { CloudApiCredentials } from './credentials.ts';
import { graphError, networkError } from './errors.ts';
import type { GraphMediaInfo, GraphPhoneNumber, GraphSendResponse } from './graph-types.ts';

/** `fetch` or anything that answers like it (tests inject failures through it). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface GraphClientOptions {
  /** `https://graph.facebook.com` in production; a local simulator in tests. */
  baseUrl: string;
  /** Graph API version segment, such as `v23.0`. */
  apiVersion: string;
  fetch: FetchLike;
  /** Per request; a request that takes longer fails as retryable. */
  timeoutMs: number;
}

/**
 * The few Graph API calls the driver makes, each with the connection's bearer token. Every
 * failure comes out as a `DriverError` (see errors.ts).
 */
export class GraphClient {
  private readonly root: string;

  constructor(
    private readonly options: GraphClientOptions,
    private readonly credentials: CloudApiCredentials,
  ) {
    this.root = `${options.baseUrl.replace(/\/+$/, '')}/${options.apiVersion}`;
  }

  /** `GET /{phone-number-id}?fields=display_phone_number,verified_name`: checks the credentials. */
  phoneNumber(): Promise<GraphPhoneNumber> {
    const id = encodeURIComponent(this.credentials.phoneNumberId);
    return this.json<GraphPhoneNumber>('GET', `${id}?fields=display_phone_number,verified_name`, undefined, 'Reading the phone number');
  }

  /** `POST /{phone-number-id}/messages` with a message body. */
  sendMessage(body: Record<string, unknown>): Promise<GraphSendResponse> {
    return this.json<GraphSendResponse>('POST', `${encodeURIComponent(this.credentials.phoneNumberId)}/messages`, body, 'Sending the message');
  }

  /** `POST /{phone-number-id}/messages` with `status: read` (mark as read, typing indicator). */
  markRead(body: Record<string, unknown>): Promise<{ success?: boolean }> {
    return this.json<{ success?: boolean }>('POST', `${encodeURIComponent(this.credentials.phoneNumberId)}/messages`, body, 'Marking the message as read');
  }

  /** `POST /{phone-number-id}/media` (multipart: file, type, messaging_product) → media id. */
  async uploadMedia(bytes: Uint8Array, mimetype: string, fileName?: string): Promise<string> {
    const form = new FormData();
    form.append('messaging_product', 'whatsapp');
    form.append('type', mimetype);
    form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>], { type: mimetype }), fileName ?? defaultFileName(mimetype));
    const url = `${this.root}/${encodeURIComponent(this.credentials.phoneNumberId)}/media`;
    const response = await this.request(url, { method: 'POST', body: form }, 'Uploading the media');
    const answer = (await response.json()) as { id?: unknown };
    if (typeof answer.id !== 'string' || !answer.id) throw badAnswer('Uploading the media', 'the answer has no media id');
    return answer.id;
  }

  /** `GET /{media-id}` → a short-lived URL (about 5 minutes) and the media's type. */
  mediaInfo(mediaId: string): Promise<GraphMediaInfo> {
    const query = `phone_number_id=${encodeURIComponent(this.credentials.phoneNumberId)}`;
    return this.json<GraphMediaInfo>('GET', `${encodeURIComponent(mediaId)}?${query}`, undefined, 'Reading the media URL');
  }

  /** `GET <media url>` with the bearer token: the raw bytes. */
  async download(url: string): Promise<{ bytes: Uint8Array; contentType: string | null }> {
    const response = await this.request(url, { method: 'GET' }, 'Downloading the media');
    return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get('content-type') };
  }

  /** Any Graph call relative to the versioned root, JSON or multipart (see `NetworkDriver.platformRequest`). */
  async call(request: PlatformRequest): Promise<unknown> {
    if (!request.form) return this.json<unknown>(request.method, request.path, request.json, request.action);
    const form = new FormData();
    for (const [name, value] of Object.entries(request.form)) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, value.blob, value.fileName);
    }
    return parsed(await this.request(`${this.root}/${request.path}`, { method: request.method, body: form }, request.action), request.action);
  }

  private async json<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body: Record<string, unknown> | undefined, action: string): Promise<T> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'content-type': 'application/json' };
    }
    return parsed<T>(await this.request(`${this.root}/${path}`, init, action), action);
  }

  private async request(url: string, init: RequestInit, action: string): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.credentials.accessToken}`);
    let response: Response;
    try {
      response = await this.options.fetch(url, { ...init, headers, signal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (cause) {
      throw networkError(cause, action);
    }
    if (!response.ok) throw await graphError(response, action);
    return response;
  }
}

async function parsed<T>(response: Response, action: string): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw badAnswer(action, 'the answer is not JSON');
  }
}

/** A 2xx answer that is not what the API documents: treated like a server fault, except that a send it answered may have gone out (`unanswered`). */
function badAnswer(action: string, problem: string): DriverError {
  return new DriverError(`${action} failed: ${problem}`, 'BAD_RESPONSE', true, true);
}

function defaultFileName(mimetype: string): string {
  const subtype = mimetype.split(';')[0]!.split('/')[1] ?? 'bin';
  const known: Record<string, string> = { jpeg: 'jpg', mpeg: 'mp3', plain: 'txt', 'x-m4a': 'm4a' };
  const extension = known[subtype] ?? subtype.replace(/[^a-z0-9]/gi, '');
  return `file.${extension || 'bin'}`;
}
