/**
 * Cookies of the server-rendered pages. They are `Secure` unless the public URL is plain http on
 * a host that is not loopback (browsers treat http://localhost and 127.0.0.1 as secure contexts,
 * so Secure cookies work there); Secure cookies take the `__Host-` prefix, which pins them to
 * this host and path `/` (a sibling subdomain cannot plant one).
 */
export function cookiesAreSecure(publicUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return true;
  }
  return url.protocol !== 'http:' || isLoopback(url.hostname);
}

function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]';
}

/** `__Host-<base>` when cookies are Secure, `<base>` otherwise. */
export function cookieName(publicUrl: string, base: string): string {
  return cookiesAreSecure(publicUrl) ? `__Host-${base}` : base;
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/, Secure as above; a session cookie without `maxAge`. */
export function setCookie(publicUrl: string, base: string, value: string, maxAgeSeconds?: number): string {
  const parts = [`${cookieName(publicUrl, base)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (cookiesAreSecure(publicUrl)) parts.push('Secure');
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`);
  return parts.join('; ');
}

/** A Set-Cookie value that removes the cookie. */
export function clearCookie(publicUrl: string, base: string): string {
  return `${setCookie(publicUrl, base, '', 0)}; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;
}

/** The value of cookie `name` in the request's Cookie header (the first one when repeated). */
export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get('cookie');
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0) continue;
    if (pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
