import { passwordSetupToken } from '../../core/identity/passwords.ts';
import type { TestService } from './service.ts';

/** The password page's link for a person, signed as the service signs it (bound to their current password). */
export async function passwordLinkFor(service: TestService, userId: string): Promise<string> {
  const ctx = service.runtime.ctx;
  const { password_hash } = await ctx.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirstOrThrow();
  const token = passwordSetupToken({ clock: ctx.clock, signingKey: ctx.keys.signing }, userId, password_hash);
  return `${service.url}/account/password?token=${encodeURIComponent(token)}`;
}

/**
 * Sets a password with a set-up or reset link, as a person does: opens the page, then posts its
 * form (same origin). An opening that is not 200 is answered as it came.
 */
export async function setPasswordWithLink(base: string, url: string, password: string): Promise<Response> {
  const link = new URL(url);
  const opened = await fetch(`${base}${link.pathname}${link.search}`);
  const html = await opened.text();
  if (opened.status !== 200) return new Response(html, { status: opened.status });
  const cookie = opened.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
  const csrf = html.match(/name="csrf" value="([^"]+)"/)![1]!;
  return fetch(`${base}/account/password`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: base },
    body: new URLSearchParams({ csrf, token: link.searchParams.get('token')!, password, password_confirm: password }),
  });
}
