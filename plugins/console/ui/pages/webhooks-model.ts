/**
 * Connection webhooks as the API holds them (spec 2.8): the view the service answers, the event
 * names it accepts, and the connections a webhook can be bound to.
 */
import { CONNECTION_EVENTS as EVENTS, type ConnectionEventName } from '../../../../core/webhooks/webhook.ts';
import { get, itemsOf } from '../api.ts';
import type { Connection } from './connections-model.ts';
export type { Connection };

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  connections: string[];
  hmacEnabled: boolean;
  /** Batching window in seconds; null when every message goes out on its own. */
  messageGroupDelay: number | null;
  enableSimulateTyping: boolean;
  createdAt: string;
  updatedAt: string;
}

/** What POST /v3/webhooks and PATCH /v3/webhooks/{id} take (PATCH: `connections` replaces the bound set). */
export type WebhookSettings = Pick<Webhook, 'url' | 'events' | 'connections' | 'hmacEnabled' | 'messageGroupDelay' | 'enableSimulateTyping'>;

/** What each connection event (spec 6.1) means to a person choosing them; a new event in core must be described here. */
const EVENT_MEANINGS: Record<ConnectionEventName, string> = {
  'messages.upsert': 'a message arrived',
  'send.message': 'a message was sent from this connection',
  'messages.update': 'a sent message was delivered or read',
  'messages.edited': 'a message was edited',
  'messages.delete': 'a message was deleted',
  'presence.update': 'a contact is typing or online',
  'connection.update': 'the connection changed status',
  'flow.data_exchange': 'a WhatsApp Flow asks for data; needs signing',
};

/** The events a webhook may subscribe to, in the service's own order. */
export const CONNECTION_EVENTS: readonly { name: ConnectionEventName; about: string }[] = EVENTS.map((name) => ({ name, about: EVENT_MEANINGS[name] }));


export const loadConnections = async (): Promise<Connection[]> => itemsOf<Connection>(await get('/v3/connections'));

/** A bound connection by name, or its id when it is not (or no longer) readable. */
export function connectionName(connections: Connection[] | undefined, id: string): string {
  return connections?.find((c) => c.id === id)?.name ?? id;
}
