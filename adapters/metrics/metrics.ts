import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { errorField, log } from '../logging/logger.ts';

/** The Prometheus text format's content type, as the registry writes it. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** One sample of a gauge read when scraped: its labels (names as the definition lists them) and value. */
export interface GaugeSample {
  labels?: Record<string, string>;
  value: number;
}

/**
 * A gauge whose value lives elsewhere (a table, a socket server) and is read at each scrape.
 * `read` should be cheap: an indexed count, a group-by over a small table, a size in memory.
 */
export interface GaugeDefinition {
  /** `switchboard_…`, snake case, in the unit it counts. */
  name: string;
  help: string;
  labelNames?: readonly string[];
  read(): Promise<GaugeSample[]> | GaugeSample[];
}

/** How a send ended, counted by the driver that carried it. */
export type SendOutcome = 'accepted' | 'sent' | 'failed';

/** How a webhook delivery attempt ended: a 2xx answer, another answer, or none (timeout, refused, network). */
export type WebhookAttemptOutcome = 'success' | 'rejected' | 'failed';

/**
 * The process's metrics: counters the service's paths move as things happen, gauges read from
 * their source at each scrape, and the runtime's own (memory, event-loop lag, garbage collection).
 * One registry per runtime, so each service a test starts has its own numbers.
 */
export interface Metrics {
  readonly registry: Registry;
  /** One HTTP request answered, by route template (never the raw path) and status. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** `n` sends reached `outcome` on connections of `driver`. */
  sendsRecorded(driver: string, outcome: SendOutcome, n?: number): void;
  /** One message received from the network on a connection of `driver`, stored once. */
  messageReceived(driver: string): void;
  /** One webhook delivery attempt ended. */
  webhookAttempt(outcome: WebhookAttemptOutcome, seconds: number): void;
  /** Adds a gauge read at each scrape; answers how to remove it (a server that stops). */
  addGauge(definition: GaugeDefinition): () => void;
  /** The whole exposition, Prometheus text format. */
  exposition(): Promise<string>;
}

/** Seconds: from a fast API call to a slow upload or a webhook at its timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(): Metrics {
  const registry = new Registry();
  // Memory (resident, heap), event-loop lag (perf_hooks' delay histogram, which Bun provides),
  // garbage collection, open handles: prom-client's defaults, prefixed like everything here.
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_', eventLoopMonitoringPrecision: 10 });

  const requests = new Counter({
    name: 'switchboard_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: 'switchboard_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const sends = new Counter({
    name: 'switchboard_sends_total',
    help: 'Outgoing messages by driver and outcome: accepted (stored and queued), sent (the network took it), failed (the network or driver refused it)',
    labelNames: ['driver', 'outcome'],
    registers: [registry],
  });
  const received = new Counter({
    name: 'switchboard_inbound_messages_total',
    help: 'Messages received from the network and stored, by driver',
    labelNames: ['driver'],
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'switchboard_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: success (2xx), rejected (another status), failed (no answer: timeout, network, outbound policy)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const attemptSeconds = new Histogram({
    name: 'switchboard_webhook_attempt_duration_seconds',
    help: 'Time a webhook delivery attempt took, by outcome',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });

  return {
    registry,
    httpRequest(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      requestSeconds.observe(labels, seconds);
    },
    sendsRecorded(driver, outcome, n = 1) {
      if (n > 0) sends.inc({ driver, outcome }, n);
    },
    messageReceived(driver) {
      received.inc({ driver });
    },
    webhookAttempt(outcome, seconds) {
      attempts.inc({ outcome });
      attemptSeconds.observe({ outcome }, seconds);
    },
    addGauge(definition) {
      new Gauge({
        name: definition.name,
        help: definition.help,
        labelNames: [...(definition.labelNames ?? [])],
        registers: [registry],
        async collect() {
          this.reset();
          let samples: GaugeSample[];
          try {
            samples = await definition.read();
          } catch (error) {
            // One source that cannot be read (the database is away) leaves its gauge empty;
            // the rest of the scrape still answers.
            log.warn({ gauge: definition.name, error: errorField(error) }, 'a metric could not be read');
            return;
          }
          for (const sample of samples) {
            if (sample.labels) this.set(sample.labels, sample.value);
            else this.set(sample.value);
          }
        },
      });
      return () => registry.removeSingleMetric(definition.name);
    },
    exposition: () => registry.metrics(),
  };
}
