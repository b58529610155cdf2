import type { ConnectionStore } from '../connections/connection.ts';
import { connectionNotFound } from '../connections/connections.ts';
import type { NetworkDriver } from '../connections/driver.ts';
import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { badRequest, unprocessable } from '../shared/errors.ts';
import type { Outbox } from '../shared/outbox.ts';
import type { MessageStore } from './message.ts';
import { normalizeRecipient } from './outgoing.ts';

/** Presence signals wait here for the worker that runs the connection's session. */
export const PRESENCE_QUEUE = 'chats.presence';

/** How far back the contact's latest message is looked for. */
const RECENT = 20;

/** `composing` shows "typing…" to the contact; `paused` clears it. */
export const PRESENCES = ['composing', 'paused'] as const;
export type Presence = (typeof PRESENCES)[number];

export interface PresenceSignal {
  connectionId: string;
  to: string;
  typing: boolean;
  /** The network id of the contact's latest message in the chat (the official network needs it). */
  lastContactMessageId?: string;
}

/**
 * Shows or clears "typing…" in a chat. Accepted at once and handed to the worker (the session of
 * an unofficial account lives there), through the outbox: it goes out once the request commits.
 */
export async function signalPresence(
  stores: { connections: ConnectionStore; messages: MessageStore; outbox: Outbox },
  deps: { drivers: ReadonlyMap<string, NetworkDriver> },
  actor: Actor,
  connectionId: string,
  chat: string,
  presence: unknown,
): Promise<PresenceSignal> {
  authorize(actor.roles, 'messages.send', 'write');
  if (!PRESENCES.includes(presence as Presence)) throw badRequest([`body.presence must be one of ${PRESENCES.join(', ')}`]);
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  if (!deps.drivers.get(connection.driver)?.sendTyping) throw unprocessable('This connection’s network shows no typing to contacts');
  if (connection.status !== 'CONNECTED') throw unprocessable(`The connection is ${connection.status}; connect it first`);
  const to = normalizeRecipient(chat);
  const remoteJid = to.includes('@') ? to : `${to}@s.whatsapp.net`;
  const recent = await stores.messages.history(connectionId, remoteJid, { limit: RECENT });
  const lastContactMessageId = recent.find((m) => m.direction === 'inbound' && m.externalId)?.externalId ?? undefined;
  // Groups and other chat ids stay whole; a number goes as digits.
  const signal: PresenceSignal = { connectionId, to: remoteJid.endsWith('@s.whatsapp.net') ? remoteJid.split('@')[0]! : remoteJid, typing: presence === 'composing' };
  if (lastContactMessageId) signal.lastContactMessageId = lastContactMessageId;
  await stores.outbox.enqueue(PRESENCE_QUEUE, signal);
  return signal;
}
