import { serveMetrics, type MetricsListener } from '../adapters/metrics/listener.ts';
import type { Config } from './config.ts';
import type { Runtime } from './runtime.ts';

/** The `METRICS_PORT` listener of a server or worker process, on HOST; none without the setting. */
export function openMetricsListener(config: Config, runtime: Runtime): MetricsListener | undefined {
  if (config.metricsPort === undefined || !runtime.ctx.metrics) return undefined;
  try {
    return serveMetrics(runtime.ctx.metrics, { port: config.metricsPort, hostname: config.host });
  } catch (error) {
    if ((error as { code?: string }).code === 'EADDRINUSE') throw new Error(`METRICS_PORT ${config.metricsPort} is in use (on ${config.host}); choose another port`);
    throw error;
  }
}
