import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64url, constantTimeEqual } from '../../../core/tokens/secret.ts';
import type { AppContext } from '../context.ts';
import { readCookie, cookieName, setCookie } from './cookies.ts';

/**
 * CSRF protection of the forms posted before anyone is signed in (sign-in, password set-up):
 * a signed double-submit cookie. The cookie holds a random nonce; the form carries
 * HMAC(service signing key, nonce). A forged cross-site post cannot read the cookie nor make
 * the HMAC, so it cannot sign the victim in to the attacker's account (login CSRF).
 */
const COOKIE = 'sb_form';
const NONCE = /^[A-Za-z0-9_-]{43}$/;

/** The token to put in the form, and the Set-Cookie to send when the browser has no nonce yet. */
export function formToken(ctx: AppContext, request: Request): { csrf: string; setCookie?: string } {
  const existing = readCookie(request, cookieName(ctx.config.publicUrl, COOKIE));
  if (existing && NONCE.test(existing)) return { csrf: sign(ctx, existing) };
  const nonce = base64url(ctx.random.bytes(32));
  return { csrf: sign(ctx, nonce), setCookie: setCookie(ctx.config.publicUrl, COOKIE, nonce) };
}

/** Whether the posted `csrf` field is the signature of this browser's nonce (constant time). */
export function formTokenMatches(ctx: AppContext, request: Request, submitted: unknown): boolean {
  const nonce = readCookie(request, cookieName(ctx.config.publicUrl, COOKIE));
  if (!nonce || !NONCE.test(nonce) || typeof submitted !== 'string') return false;
  return constantTimeEqual(sign(ctx, nonce), submitted);
}

function sign(ctx: AppContext, nonce: string): string {
  return base64url(hmac(sha256, ctx.keys.signing, new TextEncoder().encode(`form-csrf:${nonce}`)));
}
