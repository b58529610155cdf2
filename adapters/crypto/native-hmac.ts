import { createHmac } from 'node:crypto';

/**
 * `signDelivery` of core/webhooks/signature.ts, natively: the same `sha256=<hex HMAC-SHA256 of
 * "<timestamp>.<raw body>">`, where the pure-JS HMAC was a fortieth of a busy worker's time.
 */
export function nativeSignDelivery(secret: string, timestamp: number, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex')}`;
}
