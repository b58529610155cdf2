import { standard } from '../http/errors.ts';
import { expositionResponse } from './exposition.ts';
import type { Metrics } from './metrics.ts';

export interface MetricsListener {
  /** The port bound (the one asked for, or the one chosen for port 0). */
  port: number;
  stop(): Promise<void>;
}

/**
 * `METRICS_PORT`: `GET /metrics` alone on a listener of its own, without a token; meant for a
 * port a firewall keeps to the scraper's network. Anything else there is 404 (405 for another
 * method on `/metrics`), in the service's error shape.
 */
export function serveMetrics(metrics: Metrics, options: { port: number; hostname: string }): MetricsListener {
  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    reusePort: false,
    development: false,
    async fetch(request) {
      if (new URL(request.url).pathname !== '/metrics') return standard(404, 'Cannot find this route');
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        const refused = standard(405, 'Only GET /metrics is served here');
        refused.headers.set('allow', 'GET, HEAD');
        return refused;
      }
      return expositionResponse(metrics);
    },
    error: () => standard(500, 'Internal server error'),
  });
  return { port: server.port!, stop: () => server.stop(true) };
}
