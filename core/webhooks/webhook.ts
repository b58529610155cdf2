import { badRequest } from '../shared/errors.ts';

/** The eight connection events a webhook may subscribe to (spec 6.1). */
export const CONNECTION_EVENTS = [
  'messages.upsert',
  'send.message',
  'messages.update',
  'messages.edited',
  'messages.delete',
  'presence.update',
  'connection.update',
  'flow.data_exchange',
] as const;
export type ConnectionEventName = (typeof CONNECTION_EVENTS)[number];

/** Accepted as subscriptions but never sent through the delivery queue (spec 6.1, 6.2). */
export const NOT_DISPATCHED: readonly ConnectionEventName[] = ['connection.update', 'flow.data_exchange'];

/** A connection webhook (spec 2.8). The signing secret is sealed at rest and read back on request. */
export interface Webhook {
  id: string;
  workspaceId: string;
  url: string;
  events: ConnectionEventName[];
  /** Bound connections; none means the webhook receives nothing. */
  connections: string[];
  hmacEnabled: boolean;
  secret: string;
  /** Seconds of the batching window (1–300), or null for one request per event. */
  messageGroupDelay: number | null;
  enableSimulateTyping: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookSettings {
  url: string;
  events: string[];
  connections?: string[];
  hmacEnabled?: boolean;
  messageGroupDelay?: number | null;
  enableSimulateTyping?: boolean;
}

/** Checks settings as a whole and reports every broken rule at once. */
export function validateWebhookSettings(settings: WebhookSettings): void {
  const problems: string[] = [];
  if (!isHttpUrl(settings.url)) problems.push('body.url must be an absolute http(s) URL');
  if (!Array.isArray(settings.events) || settings.events.length === 0) problems.push('body.events must list at least one event');
  else {
    const unknown = settings.events.filter((e) => !(CONNECTION_EVENTS as readonly string[]).includes(e));
    if (unknown.length > 0) problems.push(`body.events has unknown event(s) ${unknown.join(', ')}; allowed: ${CONNECTION_EVENTS.join(', ')}`);
    if (settings.events.includes('flow.data_exchange') && !settings.hmacEnabled) {
      problems.push('body.events may include flow.data_exchange only with hmacEnabled: true');
    }
  }
  const delay = settings.messageGroupDelay;
  if (delay !== undefined && delay !== null && (!Number.isInteger(delay) || delay < 1 || delay > 300)) {
    problems.push('body.messageGroupDelay must be an integer from 1 to 300 (seconds)');
  }
  if (settings.enableSimulateTyping && !delay) problems.push('body.enableSimulateTyping needs a messageGroupDelay');
  if (problems.length > 0) throw badRequest(problems);
}

/** Does this webhook get this event of this connection? */
export function subscribes(webhook: Webhook, event: string, connectionId: string): boolean {
  return (
    webhook.connections.includes(connectionId) &&
    (webhook.events as readonly string[]).includes(event) &&
    !(NOT_DISPATCHED as readonly string[]).includes(event)
  );
}

export function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
  } catch {
    return false;
  }
}
