/**
 * Hash routes (`#/connections/<id>`): every page has an address to bookmark or share, and the
 * service serves one document at `/` whatever the page.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  /** The path after `#`, without its query: `/connections/abc`. */
  path: string;
  /** Its segments: `['connections', 'abc']`. */
  parts: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?', 2);
  return { path, parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(search) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

/** The href of a console page: `href('connections', id)` → `#/connections/<id>`. */
export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function navigate(...parts: string[]): void {
  location.hash = href(...parts).slice(1);
}
