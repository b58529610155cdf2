/**
 * Connection webhooks as the API holds them (spec 2.8): the view the service answers, the event
 * names it accepts, and the connections a webhook can be bound to.
 */
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

/** The eight connection events (spec 6.1), as the API's request schema lists them. */
export const CONNECTION_EVENTS: readonly { name: string; about: string }[] = [
  { name: 'messages.upsert', about: 'a message arrived' },
  { name: 'send.message', about: 'a message was sent from this connection' },
  { name: 'messages.update', about: 'a sent message was delivered or read' },
  { name: 'messages.edited', about: 'a message was edited' },
  { name: 'messages.delete', about: 'a message was deleted' },
  { name: 'presence.update', about: 'a contact is typing or online' },
  { name: 'connection.update', about: 'the connection changed status' },
  { name: 'flow.data_exchange', about: 'a WhatsApp Flow asks for data; needs signing' },
];


export const loadConnections = async (): Promise<Connection[]> => itemsOf<Connection>(await get('/v3/connections'));

/** A bound connection by name, or its id when it is not (or no longer) readable. */
export function connectionName(connections: Connection[] | undefined, id: string): string {
  return connections?.find((c) => c.id === id)?.name ?? id;
}
