import { succeeded, type AttemptOutcome } from '../../core/webhooks/delivery.ts';
import type { WebhookSender } from '../../core/webhooks/dispatch.ts';
import { OutboundRefusal, type Outbound } from '../outbound/outbound.ts';
import type { Metrics } from '../metrics/metrics.ts';

/** What a request that got no answer records: never which network error it was (that would map a network for the caller). */
export const DELIVERY_FAILED = 'delivery failed';

export type PostRequest = (url: string, body: string, headers: Record<string, string>, timeoutMs: number) => Promise<AttemptOutcome & { durationMs: number; answer?: string }>;

/**
 * POSTs through the outbound policy with a hard timeout, never following a redirect; any answer or
 * failure becomes an outcome, never a throw. A refusal is "refused by the outbound policy: why"
 * (no request was sent); any other failure is "delivery failed". The answer's body is read whole
 * (which also frees the connection for reuse) and handed back as `answer` for callers that care
 * (the helpdesk API channel reads `{ sourceId }` from it).
 */
export function outboundPost(outbound: Outbound): PostRequest {
  return async (url, body, headers, timeoutMs) => {
    const started = performance.now();
    try {
      const response = await outbound.fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(timeoutMs) });
      const answer = await response.text().catch(() => undefined);
      return { status: response.status, durationMs: performance.now() - started, answer };
    } catch (error) {
      const message = error instanceof OutboundRefusal ? `refused by the outbound policy: ${error.message}` : DELIVERY_FAILED;
      return { error: message, durationMs: performance.now() - started };
    }
  };
}

/** The webhooks' sender: the answer's content does not matter to them. With `metrics`, each attempt is counted. */
export function webhookSender(outbound: Outbound, metrics?: Metrics): WebhookSender {
  const post = outboundPost(outbound);
  if (!metrics) return { post };
  return {
    async post(url, body, headers, timeoutMs) {
      const outcome = await post(url, body, headers, timeoutMs);
      metrics.webhookAttempt(succeeded(outcome) ? 'success' : 'status' in outcome ? 'rejected' : 'failed', outcome.durationMs / 1000);
      return outcome;
    },
  };
}
