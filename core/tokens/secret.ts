import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { Random } from '../shared/ports.ts';

export const API_TOKEN_PREFIX = 'sk_live';

/** 32 random bytes (256 bits), base64url: `sk_live_` + 43 characters. */
export function newApiTokenSecret(random: Random): string {
  return `${API_TOKEN_PREFIX}_${base64url(random.bytes(32))}`;
}

/**
 * Secrets are high-entropy, so one SHA-256 is enough to make the stored value useless to a
 * thief, and it can be indexed for lookup; no slow KDF is needed as it would be for passwords.
 */
export function hashSecret(secret: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(secret)));
}

/**
 * Compares two strings in time independent of where they first differ. It compares UTF-16 code
 * units, not UTF-8 bytes: TextEncoder turns every lone surrogate into U+FFFD, which made
 * different strings compare equal.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    diff |= (i < a.length ? a.charCodeAt(i) : 0) ^ (i < b.length ? b.charCodeAt(i) : 0);
  }
  return diff === 0;
}

/** Does `secret` match the stored hash? */
export function secretMatches(secret: string, storedHash: string): boolean {
  return constantTimeEqual(hashSecret(secret), storedHash);
}

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
