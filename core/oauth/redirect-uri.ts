/**
 * The redirect URI rules of spec 4.1 (registration) and OAuth 2.1: absolute, no fragment, no
 * credentials, `https` always, `http` only on loopback, or a native-app scheme containing a dot
 * (`com.example.app:/callback`). Returns what is wrong, or undefined when the URI is acceptable.
 */
export function redirectUriProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return 'must be a non-empty string';
  if (value.length > 2000) return 'is longer than 2000 characters';
  if (value.includes('#')) return 'must not contain a fragment';
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value)) return 'must be an absolute URI';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URI';
  }
  if (url.username || url.password) return 'must not contain credentials';
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'https') return url.hostname ? undefined : 'must name a host';
  if (scheme === 'http') return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'may use http only on loopback (localhost, 127.0.0.1, [::1])';
  if (!scheme.includes('.')) return `uses the scheme "${scheme}", which is neither https, loopback http, nor a native-app scheme containing a dot`;
  return undefined;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Site and logo URLs shown on the consent screen: plain web addresses only. */
export function webUrlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return 'must be a non-empty string';
  if (value.length > 2000) return 'is longer than 2000 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not contain credentials';
  return undefined;
}
