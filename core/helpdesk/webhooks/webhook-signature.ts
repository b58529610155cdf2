import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { constantTimeEqual } from '../../tokens/secret.ts';

/**
 * Spec 6.5: "`X-Helpdesk-Signature` (hex HMAC-SHA256 of the raw body alone, no timestamp, keyed
 * with `signingSecret`)". The API channel signs its outgoing POSTs the same way (6.6).
 */
export const HELPDESK_EVENT_HEADER = 'X-Helpdesk-Event';
export const HELPDESK_SIGNATURE_HEADER = 'X-Helpdesk-Signature';

export function helpdeskSignature(secret: string, rawBody: string | Uint8Array): string {
  const body = typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
  return bytesToHex(hmac(sha256, new TextEncoder().encode(secret), body));
}

/** A consumer's check: recompute over the raw body as received and compare in constant time. */
export function verifyHelpdeskSignature(secret: string, rawBody: string | Uint8Array, signature: string | null | undefined): boolean {
  if (!signature) return false;
  return constantTimeEqual(helpdeskSignature(secret, rawBody), signature.trim().toLowerCase().replace(/^sha256=/, ''));
}
