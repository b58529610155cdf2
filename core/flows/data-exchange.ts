/**
 * What the service does with a decrypted Flow data-exchange request (spec 6.2, 8; issue 9
 * item 4). Pure: the adapter decrypts, posts and encrypts.
 *
 * - `ping` (the platform's health check) is answered by the service: `{ data: { status: "active" } }`.
 * - An error notification (`data.error` set: the platform reports that a previous answer broke
 *   the screen) is acknowledged: `{ data: { acknowledged: true } }`.
 * - Anything else (`INIT`, `BACK`, `data_exchange`) is a question for the customer: posted as
 *   plain signed JSON to the connection webhook subscribed to `flow.data_exchange`, once, within
 *   about five seconds. Its answer must be a JSON object `{ screen, data }`.
 */
export type FlowRequestKind = 'ping' | 'error_notification' | 'question';

/** Section 8: "`flow.data_exchange` answer | about 5 seconds, no retry". */
export const DATA_EXCHANGE_TIMEOUT_MS = 5_000;

export const PING_ANSWER = { data: { status: 'active' } } as const;
export const ERROR_NOTIFICATION_ANSWER = { data: { acknowledged: true } } as const;

export function classifyFlowRequest(payload: unknown): FlowRequestKind {
  const request = asObject(payload) ?? {};
  if (request.action === 'ping') return 'ping';
  const data = asObject(request.data);
  if (data && data.error !== undefined) return 'error_notification';
  return 'question';
}

/** The plain JSON question for the customer's webhook (spec 6.2). */
export function flowQuestion(payload: unknown, connectionId: string): Record<string, unknown> {
  const request = asObject(payload) ?? {};
  const question: Record<string, unknown> = {
    event: 'flow.data_exchange',
    connectionId,
    action: typeof request.action === 'string' ? request.action : 'data_exchange',
    flow_token: request.flow_token,
    data: asObject(request.data) ?? {},
  };
  if (typeof request.screen === 'string' && request.screen) question.screen = request.screen;
  if (typeof request.version === 'string') question.version = request.version;
  return question;
}

/** What the customer's endpoint did with the question. */
export interface CustomerReply {
  status?: number;
  answer?: string;
  /** Set when no answer came (timeout, refused connection). */
  error?: string;
}

export type ReadReply = { ok: true; answer: Record<string, unknown> } | { ok: false; reason: string };

/** A 2xx answer holding a JSON object with a `screen` and (optional) `data` object; anything else is a failure with a reason. */
export function readCustomerReply(reply: CustomerReply): ReadReply {
  if (reply.error !== undefined || reply.status === undefined) return { ok: false, reason: `the webhook did not answer (${reply.error ?? 'no answer'})` };
  if (reply.status < 200 || reply.status > 299) return { ok: false, reason: `the webhook answered HTTP ${reply.status}` };
  const text = (reply.answer ?? '').trim();
  if (!text) return { ok: false, reason: 'the webhook answered with an empty body (a bare 200); it must answer { screen, data }' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'the webhook’s answer is not JSON; it must answer { screen, data }' };
  }
  const answer = asObject(parsed);
  if (!answer) return { ok: false, reason: 'the webhook’s answer is not a JSON object; it must answer { screen, data }' };
  if (typeof answer.screen !== 'string' || !answer.screen) return { ok: false, reason: 'the webhook’s answer has no screen; it must answer { screen, data }' };
  if (answer.data !== undefined && !asObject(answer.data)) return { ok: false, reason: 'the webhook’s answer has a data that is not an object' };
  return { ok: true, answer };
}

/**
 * The platform's documented way to show an error without breaking the form: the current
 * screen again with `data.error_message` (shown to the user). Without a current screen (the
 * first request of a Flow) there is none, and the caller answers with an HTTP error instead.
 */
export function errorAnswer(payload: unknown, reason: string): Record<string, unknown> | undefined {
  const screen = asObject(payload)?.screen;
  if (typeof screen !== 'string' || !screen) return undefined;
  return { screen, data: { error_message: `The business could not answer this step: ${reason}` } };
}

function asObject(value: unknown): Record<string, any> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, any>) : undefined;
}
