import { Elysia } from 'elysia';
import type { Metrics } from './metrics.ts';

/** The route label of requests no route matched: one series, whatever paths are tried. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts every routed request by its route template (`/v3/connections/:id`, never the raw path,
 * so ids do not multiply the series) and the status actually answered, with its duration. The
 * status is read from the response itself where there is one: an error's answer is made by the
 * app's error hook, which Elysia's `set.status` does not follow. Requests refused before routing
 * (an oversized body, a broken URL) are not counted here.
 */
export function httpMetrics(metrics: Metrics | undefined) {
  const plugin = new Elysia({ name: 'http-metrics' });
  if (!metrics) return plugin;
  const started = new WeakMap<Request, number>();
  const answered = new WeakMap<Request, number>();
  return plugin
    .onRequest(({ request }) => {
      started.set(request, performance.now());
    })
    .mapResponse({ as: 'global' }, ({ request, responseValue }) => {
      if (responseValue instanceof Response) answered.set(request, responseValue.status);
    })
    // The context is destructured, never passed on whole: Elysia reads its hooks' source and,
    // for a context used whole, parses every request's cookies and query for them.
    .onAfterResponse({ as: 'global' }, ({ request, route, set, ...rest }) => {
      // Elysia sets `code` on the context of a request that failed (NOT_FOUND: no route matched).
      const code = (rest as { code?: unknown }).code;
      const start = started.get(request);
      if (start === undefined) return;
      const status = answered.get(request) ?? (code === 'NOT_FOUND' ? 404 : typeof set.status === 'number' ? set.status : 200);
      metrics.httpRequest(request.method, route || UNMATCHED_ROUTE, status, (performance.now() - start) / 1000);
    });
}
