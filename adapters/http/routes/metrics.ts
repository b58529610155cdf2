import { Elysia, t } from 'elysia';
import type { AppContext } from '../context.ts';
import { standard } from '../errors.ts';
import { StandardError } from '../schemas.ts';
import { bearerMatches, expositionResponse } from '../../metrics/exposition.ts';

/**
 * `GET /metrics` on the public port: open only with `METRICS_TOKEN` set, and then only to
 * `Authorization: Bearer <METRICS_TOKEN>`. Without the setting the route answers 404, as if it
 * were not there (a scraper on a private network uses `METRICS_PORT` instead, without a token).
 */
export function metricsRoutes(ctx: AppContext) {
  return new Elysia({ name: 'metrics' }).get(
    '/metrics',
    async ({ request }) => {
      const token = ctx.config.metricsToken;
      if (!token || !ctx.metrics) return standard(404, 'Cannot find this route');
      if (!bearerMatches(request.headers.get('authorization'), token)) {
        const refused = standard(401, 'Send the metrics token: Authorization: Bearer <METRICS_TOKEN>');
        refused.headers.set('www-authenticate', 'Bearer realm="switchboard"');
        return refused;
      }
      return expositionResponse(ctx.metrics);
    },
    {
      response: {
        200: t.String({ description: 'The Prometheus text exposition format (`text/plain; version=0.0.4`)' }),
        401: StandardError,
        404: StandardError,
      },
      detail: {
        tags: ['Service'],
        summary: 'Metrics (Prometheus text format)',
        description:
          'Open with `Authorization: Bearer <METRICS_TOKEN>` when `METRICS_TOKEN` is set; 404 otherwise. `METRICS_PORT` serves the same on a listener of its own, without a token. ' +
          'HTTP requests by route template and status with their latency, sends by driver and outcome, inbound messages, webhook attempts and queue, plugin event backlog, campaigns, sockets and agents online, connections by driver and status, database pool, memory and event-loop lag (docs/operations.md).',
        security: [{ metricsToken: [] }],
      },
    },
  );
}
