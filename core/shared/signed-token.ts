import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64url, constantTimeEqual } from '../tokens/secret.ts';

/**
 * Compact signed tokens for links that need no API key (media downloads, upload tickets):
 * `<base64url(JSON payload)>.<base64url(HMAC-SHA256)>`. The payload carries its own expiry
 * (`exp`, Unix seconds) and purpose (`use`), so a token minted for one use cannot serve another.
 */
export interface SignedPayload<Use extends string = string> {
  use: Use;
  exp: number;
}

export function signToken<T extends SignedPayload>(key: Uint8Array, payload: T): string {
  const body = base64url(new TextEncoder().encode(JSON.stringify(payload)));
  return `${body}.${signature(key, body)}`;
}

/** The payload when the signature is right, the purpose matches and it has not expired; else undefined. */
export function verifyToken<T extends SignedPayload>(key: Uint8Array, token: string, use: string, now: Date): T | undefined {
  const [body, mac, extra] = token.split('.');
  if (!body || !mac || extra !== undefined) return undefined;
  if (!constantTimeEqual(signature(key, body), mac)) return undefined;
  let payload: T;
  try {
    payload = JSON.parse(new TextDecoder().decode(fromBase64url(body))) as T;
  } catch {
    return undefined;
  }
  if (payload.use !== use || typeof payload.exp !== 'number' || payload.exp * 1000 <= now.getTime()) return undefined;
  return payload;
}

function signature(key: Uint8Array, body: string): string {
  return base64url(hmac(sha256, key, new TextEncoder().encode(body)));
}

function fromBase64url(text: string): Uint8Array {
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const binary = atob(padded);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
