import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { badRequest, DomainError, unprocessable } from '../shared/errors.ts';
import type { Connection, ConnectionStore } from './connection.ts';
import { connectionNotFound } from './connections.ts';
import { DriverError, type NetworkDriver } from './driver.ts';

/** Whether a number is on the network, as one of the workspace's connections found out. */
export interface NumberCheck {
  phone: string;
  exists: boolean;
  /** The number's chat id on the network when it exists. */
  jid: string | null;
  /** The connection that asked the network. */
  connectionId: string;
}

export interface NumberLookupDeps {
  drivers: ReadonlyMap<string, NetworkDriver>;
}

/**
 * Is `phone` on the network? Through the given connection, or (standalone: no connection named)
 * through the workspace's first connected connection whose network can tell. Looking a number
 * up is part of sending to it (`messages.send`).
 */
export async function checkNumber(connections: ConnectionStore, deps: NumberLookupDeps, actor: Actor, phone: unknown, connectionId?: string): Promise<NumberCheck> {
  authorize(actor.roles, 'messages.send', 'write');
  const digits = phoneDigits(phone);
  const connection = connectionId === undefined ? await anyLookupConnection(connections, deps, actor) : await namedConnection(connections, deps, actor, connectionId);
  const driver = deps.drivers.get(connection.driver)!;
  try {
    const found = await driver.lookupNumber!({ id: connection.id, workspaceId: connection.workspaceId, credentials: connection.credentials, phoneNumber: connection.phoneNumber }, digits);
    return { phone: digits, exists: found.exists, jid: found.exists ? found.jid : null, connectionId: connection.id };
  } catch (error) {
    if (error instanceof DriverError) throw new DomainError(error.retryable ? 'upstream_unavailable' : 'unprocessable', `The network could not check the number: ${error.message}`);
    throw error;
  }
}

async function namedConnection(connections: ConnectionStore, deps: NumberLookupDeps, actor: Actor, connectionId: string): Promise<Connection> {
  const connection = await connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  if (!deps.drivers.get(connection.driver)?.lookupNumber) {
    throw unprocessable('This connection’s network offers no number lookup (the official network has none): a send to a number not on it fails with an error');
  }
  if (connection.status !== 'CONNECTED') throw unprocessable(`The connection is ${connection.status}; connect it before checking numbers`);
  return connection;
}

async function anyLookupConnection(connections: ConnectionStore, deps: NumberLookupDeps, actor: Actor): Promise<Connection> {
  const all = await connections.list(actor.workspaceId);
  const usable = all.find((c) => c.status === 'CONNECTED' && deps.drivers.get(c.driver)?.lookupNumber);
  if (!usable) throw unprocessable('No connected connection of this workspace can check numbers: connect an unofficial or sandbox connection');
  return usable;
}

/** A phone number in international format, as digits; a chat id or anything else is a 400. */
function phoneDigits(phone: unknown): string {
  const digits = typeof phone === 'string' ? phone.trim().replace(/[\s().-]/g, '').replace(/^\+/, '').replace(/^00/, '') : '';
  if (!/^[1-9]\d{6,14}$/.test(digits)) throw badRequest(['body.phone must be a phone number in international format (E.164), such as +5511999999999']);
  return digits;
}
