/**
 * Which web origins may call the MCP endpoint from a browser (`MCP_ALLOWED_ORIGINS`). The MCP
 * Streamable HTTP transport requires the `Origin` header to be checked (DNS-rebinding
 * protection): a request whose Origin is present and not allowed is refused with 403. A request
 * without Origin (every non-browser client) is not a browser's and always passes.
 *
 * Entries: `*` (every origin), an exact origin (`https://app.example.com`, default ports
 * normalised) or an origin on any port (`http://localhost:*`).
 */
export interface AllowedOrigins {
  any: boolean;
  /** Exact origins as a browser sends them (`https://app.example.com`, `http://localhost:6274`). */
  exact: ReadonlySet<string>;
  /** `scheme://host` of the entries that allow any port. */
  anyPort: ReadonlySet<string>;
}

/** The default: local tools (MCP Inspector and the like) on any port; the service's own origin is always allowed on top. */
export const DEFAULT_ALLOWED_ORIGINS = 'http://localhost:*,http://127.0.0.1:*,http://[::1]:*';

export function parseAllowedOrigins(text: string | undefined): { origins: AllowedOrigins; problems: string[] } {
  const exact = new Set<string>();
  const anyPort = new Set<string>();
  const problems: string[] = [];
  let any = false;
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (entry === '*') {
      any = true;
      continue;
    }
    const wildcardPort = entry.endsWith(':*');
    const base = originOf(wildcardPort ? entry.slice(0, -2) : entry.replace(/\/$/, ''));
    if (!base || (wildcardPort && new URL(base).port !== '')) {
      problems.push(`"${entry}" is not *, an origin like https://app.example.com or an origin on any port like http://localhost:*`);
      continue;
    }
    (wildcardPort ? anyPort : exact).add(base);
  }
  return { origins: { any, exact, anyPort }, problems };
}

/** Whether a browser's `Origin` may call; `own` (the service's own origin) always may. */
export function originAllowed(origins: AllowedOrigins, origin: string, own: string): boolean {
  if (origins.any) return true;
  const normalised = originOf(origin);
  if (!normalised) return false;
  if (normalised === originOf(own) || origins.exact.has(normalised)) return true;
  const url = new URL(normalised);
  return origins.anyPort.has(`${url.protocol}//${url.hostname}`);
}

/** `scheme://host[:port]` of an http(s) origin with nothing else (no path, query, credentials); undefined otherwise. */
function originOf(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/' || /[/?#]$/.test(text)) return undefined;
  return url.origin;
}
