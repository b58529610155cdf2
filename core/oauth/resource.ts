/**
 * Audience binding (RFC 8707, spec 5.3): a `resource` must be an absolute URL on the issuer's
 * origin without a fragment; a token bound to it works only under that path.
 */
export function resourceProblem(resource: string, issuer: string): string | undefined {
  if (resource.includes('#')) return 'resource must not contain a fragment';
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return 'resource must be an absolute URL';
  }
  if (url.origin !== new URL(issuer).origin) return `resource must be on this server (${new URL(issuer).origin})`;
  return undefined;
}

/** Is `requestUrl` at or under the resource's path? */
export function withinResource(resource: string, requestUrl: string): boolean {
  const bound = new URL(resource);
  const asked = new URL(requestUrl);
  if (bound.origin !== asked.origin) return false;
  const base = bound.pathname.replace(/\/+$/, '');
  return base === '' || asked.pathname === base || asked.pathname.startsWith(`${base}/`);
}

/** Is `narrower` the same audience as `wider` or inside it? (A refresh may narrow, never widen.) */
export function narrowsResource(wider: string | null, narrower: string | null): boolean {
  if (wider === null) return true;
  if (narrower === null) return false;
  return withinResource(wider, narrower);
}
