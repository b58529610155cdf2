import type { WebhookSender } from '../../core/webhooks/dispatch.ts';

/** POSTs a delivery with a hard timeout; any answer or failure becomes an outcome, never a throw. */
export const httpSender: WebhookSender = {
  async post(url, body, headers, timeoutMs) {
    const started = performance.now();
    try {
      const response = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
      // Drain the answer so the connection can be reused; its content does not matter.
      await response.arrayBuffer().catch(() => undefined);
      return { status: response.status, durationMs: performance.now() - started };
    } catch (error) {
      const name = (error as Error)?.name;
      const message = name === 'TimeoutError' || name === 'AbortError' ? `timeout after ${timeoutMs} ms` : (error as Error)?.message ?? String(error);
      return { error: message, durationMs: performance.now() - started };
    }
  },
};
