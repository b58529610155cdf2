import type { AttemptOutcome } from '../../core/webhooks/delivery.ts';
import type { WebhookSender } from '../../core/webhooks/dispatch.ts';

/**
 * POSTs with a hard timeout; any answer or failure becomes an outcome, never a throw. The answer's
 * body is read whole (which also frees the connection for reuse) and handed back as `answer` for
 * callers that care (the helpdesk API channel reads `{ sourceId }` from it).
 */
export async function postRequest(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<AttemptOutcome & { durationMs: number; answer?: string }> {
  const started = performance.now();
  try {
    const response = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    const answer = await response.text().catch(() => undefined);
    return { status: response.status, durationMs: performance.now() - started, answer };
  } catch (error) {
    const name = (error as Error)?.name;
    const message = name === 'TimeoutError' || name === 'AbortError' ? `timeout after ${timeoutMs} ms` : (error as Error)?.message ?? String(error);
    return { error: message, durationMs: performance.now() - started };
  }
}

/** The webhooks' sender: the answer's content does not matter to them. */
export const httpSender: WebhookSender = { post: postRequest };
