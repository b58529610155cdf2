import { badRequest, DomainError } from '../../core/shared/errors.ts';
import { formTextProblem, textProblem } from './input-guard.ts';

/**
 * How much of a request body the service reads (issue 19, section 2): `MAX_BODY_BYTES` for JSON,
 * form and text bodies, `MAX_MEDIA_BYTES` for uploads. Every body is read through this module,
 * so a body over its limit is refused from its Content-Length or, when chunked, as soon as the
 * count passes the limit, and no more than the limit is ever held.
 */
export interface BodyLimits {
  body: number;
  media: number;
}

export const DEFAULT_BODY_LIMITS: BodyLimits = { body: 1024 * 1024, media: 16 * 1024 * 1024 };

export function bodyLimits(config: { maxBodyBytes?: number; maxMediaBytes?: number }): BodyLimits {
  return { body: config.maxBodyBytes ?? DEFAULT_BODY_LIMITS.body, media: config.maxMediaBytes ?? DEFAULT_BODY_LIMITS.media };
}

export class PayloadTooLarge extends DomainError {
  constructor(readonly limit: number) {
    super('too_large', `The request body must be at most ${limit} bytes`);
  }
}

/** The declared Content-Length when it is a number; undefined for chunked bodies. */
export function declaredLength(request: Request): number | undefined {
  const header = request.headers.get('content-length');
  if (header === null || header.trim() === '') return undefined;
  const length = Number(header);
  return Number.isFinite(length) ? length : undefined;
}

export function assertDeclaredSize(request: Request, limit: number): void {
  const length = declaredLength(request);
  if (length !== undefined && length > limit) throw new PayloadTooLarge(limit);
}

/**
 * The body's bytes, at most `limit` of them: a declared length over it is refused before reading;
 * a chunked body's chunks are counted as they arrive and the read stops at the first chunk over
 * (the rest is left on the connection).
 */
export async function readBytes(request: Request, limit: number): Promise<Uint8Array> {
  const held = bodiesRead.get(request);
  if (held) {
    if (held.byteLength > limit) throw new PayloadTooLarge(limit);
    return held;
  }
  const bytes = await readBodyOnce(request, limit);
  bodiesRead.set(request, bytes);
  return bytes;
}

/**
 * The bytes of every request body read so far, by request: the JSON hook reads the body itself
 * (a clone of every request cost a busy server a tenth of its time), and a route that checks a
 * signature over those bytes reads them here.
 */
const bodiesRead = new WeakMap<Request, Uint8Array>();

async function readBodyOnce(request: Request, limit: number): Promise<Uint8Array> {
  assertDeclaredSize(request, limit);
  if (!request.body) return new Uint8Array(0);
  // A declared length within the limit bounds the body (the connection's framing ends it
  // there): read at once, natively, where counting chunks through a stream reader cost a busy
  // server more than the JSON parse.
  if (declaredLength(request) !== undefined) return new Uint8Array(await request.arrayBuffer());
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      // Not cancelled: cancelling one branch of a cloned body resets the connection before the 413 is sent.
      if (received > limit) throw new PayloadTooLarge(limit);
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  if (chunks.length === 1) return chunks[0]!;
  return joinChunks(chunks, received);
}

/** The chunks of a body read to its end, as one array of `length` bytes. */
export function joinChunks(chunks: readonly Uint8Array[], length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as UTF-8 text (at most `limit` bytes); bytes that are not UTF-8 are a 400, not a silent U+FFFD. */
export async function readText(request: Request, limit: number): Promise<string> {
  const bytes = await readBytes(request, limit);
  try {
    return utf8.decode(bytes);
  } catch {
    throw badRequest(['body is not valid UTF-8']);
  }
}

/** Form parameters (`application/x-www-form-urlencoded`), refused with a NUL or lone surrogate in any field. */
export async function readForm(request: Request, limit: number): Promise<URLSearchParams> {
  const text = await readText(request, limit);
  const problem = formTextProblem(text);
  if (problem) throw badRequest([problem]);
  return new URLSearchParams(text);
}

/** A multipart form read within `limit`; undefined when it does not parse as one. */
export async function readMultipart(request: Request, limit: number): Promise<FormData | undefined> {
  const bytes = await readBytes(request, limit);
  try {
    return await new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': request.headers.get('content-type') ?? '' } }).formData();
  } catch {
    return undefined;
  }
}

/** A text field of a request (a header value, a form field) checked for NUL and lone surrogates. */
export function assertCleanText(value: string, where: string): void {
  const problem = textProblem(value);
  if (problem) throw badRequest([`${where} ${problem}`]);
}
