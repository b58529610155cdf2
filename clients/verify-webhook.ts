/**
 * Verifies a Switchboard connection-webhook delivery. Copy this file into your project: it has
 * no dependencies beyond `node:crypto` (Node 18+, Bun, Deno).
 *
 * A delivery of a webhook with `hmacEnabled: true` carries
 *   X-Switchboard-Signature-256: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">
 *   X-Switchboard-Timestamp:     <Unix seconds>
 * keyed with the webhook's secret (`GET /v3/webhooks/{id}/secret`). Verify over the raw body
 * exactly as received (before any JSON parsing), refuse timestamps more than 300 seconds away
 * from now, and compare in constant time. This function does all three.
 *
 *   const raw = await request.text();
 *   if (!verifySwitchboardWebhook(SECRET, raw, request.headers)) return new Response(null, { status: 401 });
 *   const delivery = JSON.parse(raw);
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-switchboard-signature-256';
export const TIMESTAMP_HEADER = 'x-switchboard-timestamp';

/** A fetch `Headers`, or Node's `req.headers` (or any object keyed by header name, any case). */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Oldest (or furthest ahead) accepted timestamp, in seconds from now. Default 300. */
  toleranceSeconds?: number;
  /** The current time: a Date or Unix milliseconds (as `Date.now()`). Default: now. */
  now?: Date | number;
}

/**
 * True when the delivery is signed with `secret`, over exactly `rawBody`, at a time within the
 * tolerance. False for anything else (missing or malformed headers, another secret, a changed
 * body, a stale or replayed timestamp). Never throws on bad input.
 */
export function verifySwitchboardWebhook(secret: string, rawBody: string | Uint8Array, headers: WebhookHeaders, { toleranceSeconds = 300, now }: VerifyOptions = {}): boolean {
  const signature = header(headers, SIGNATURE_HEADER);
  const timestamp = header(headers, TIMESTAMP_HEADER);
  if (!signature || !timestamp || !/^\d{1,15}$/.test(timestamp)) return false;

  const nowMs = now === undefined ? Date.now() : now instanceof Date ? now.getTime() : now;
  if (!Number.isFinite(nowMs) || Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) > toleranceSeconds) return false;

  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')}`;
  const given = Buffer.from(signature, 'utf8');
  const wanted = Buffer.from(expected, 'utf8');
  // timingSafeEqual needs equal lengths; the length of a signature is no secret.
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}
