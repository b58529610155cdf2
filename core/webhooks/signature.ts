import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { constantTimeEqual } from '../tokens/secret.ts';

/**
 * Delivery signing (spec 6.4): `X-Switchboard-Signature-256: sha256=<hex HMAC-SHA256 of
 * "<timestamp>.<raw body>">` keyed with the webhook's secret, `X-Switchboard-Timestamp: <unix s>`.
 */
export const SIGNATURE_HEADER = 'X-Switchboard-Signature-256';
export const TIMESTAMP_HEADER = 'X-Switchboard-Timestamp';
export const MAX_SIGNATURE_AGE_SECONDS = 300;

export function signDelivery(secret: string, timestamp: number, rawBody: string): string {
  const mac = hmac(sha256, new TextEncoder().encode(secret), new TextEncoder().encode(`${timestamp}.${rawBody}`));
  return `sha256=${bytesToHex(mac)}`;
}

/**
 * What a consumer does: recompute over the raw body exactly as received, compare in constant
 * time, and refuse timestamps more than 300 seconds away from now.
 */
export function verifyDelivery(
  secret: string,
  rawBody: string,
  headers: { signature: string | null | undefined; timestamp: string | null | undefined },
  nowSeconds: number,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!headers.signature || !Number.isInteger(timestamp)) return false;
  if (Math.abs(nowSeconds - timestamp) > MAX_SIGNATURE_AGE_SECONDS) return false;
  return constantTimeEqual(signDelivery(secret, timestamp, rawBody), headers.signature);
}
