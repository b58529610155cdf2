import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { DriverConnection } from '../../../core/connections/driver.ts';

/**
 * The two checks of provider callbacks at `/v3/webhooks/whatsapp/{connectionId}` (spec 4.5,
 * 5.6): the `GET` verification handshake with the verify token, and the `POST` signature
 * `x-hub-signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>`.
 */

/**
 * Spec 5.6: "GET: verify token". The platform calls
 * `?hub.mode=subscribe&hub.verify_token=<token>&hub.challenge=<n>` and expects the challenge
 * back; anything else gets no challenge (the caller answers 403).
 */
export function verifyHandshake(connection: DriverConnection, query: Record<string, string | undefined>): string | undefined {
  const expected = connection.credentials.verifyToken;
  const mode = query['hub.mode'];
  const token = query['hub.verify_token'];
  const challenge = query['hub.challenge'];
  if (!expected || mode !== 'subscribe' || typeof token !== 'string' || typeof challenge !== 'string') return undefined;
  return constantTimeEqual(token, expected) ? challenge : undefined;
}

/**
 * Spec 5.6: "POST: `x-hub-signature-256` when an app secret is configured, otherwise no HMAC
 * is required". With a secret, a missing, malformed or wrong signature is refused.
 */
export function isAuthentic(connection: DriverConnection, rawBody: string, headers: Record<string, string | undefined>): boolean {
  const secret = connection.credentials.appSecret;
  if (!secret) return true;
  const header = headerValue(headers, 'x-hub-signature-256');
  const match = header?.trim().match(/^sha256=([0-9a-fA-F]{64})$/);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(rawBody, 'utf8').digest();
  return timingSafeEqual(Buffer.from(match[1]!.toLowerCase(), 'hex'), expected);
}

/** Equality that takes the same time wherever the strings differ, whatever their lengths (compares digests). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right);
}

function headerValue(headers: Record<string, string | undefined>, name: string): string | undefined {
  if (headers[name] !== undefined) return headers[name];
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}
