import type { Actor, IdentityStore } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { assertConnectionHeadroom, type PlanCatalog } from '../plans/plans.ts';
import { badRequest, coded, DomainError } from '../shared/errors.ts';
import type { Outbox } from '../shared/outbox.ts';
import type { Clock, IdGen } from '../shared/ports.ts';
import type { Connection, ConnectionStore, EventPublisher } from './connection.ts';
import { nextConnectionStatus, type ConnectionEvent } from './connection-status.ts';
import type { NetworkDriver } from './driver.ts';
import type { WebhookStore } from '../webhooks/webhooks.ts';

/** Queue of session work (connect, disconnect, logout) carried out by the worker. */
export const SESSION_QUEUE = 'connections.session';
/** `restart`: close whatever session runs and open one from the stored pairing (an imported one). */
export type SessionCommand = { connectionId: string; action: 'connect' | 'disconnect' | 'logout' | 'forget' | 'restart'; pairingPhoneNumber?: string; driver?: string };

export interface ConnectionStores {
  connections: ConnectionStore;
  /** A deleted connection leaves the webhooks bound to it (issue 20 §9). */
  webhooks: Pick<WebhookStore, 'unbindConnection'>;
  identity: IdentityStore;
  events: EventPublisher;
  outbox: Outbox;
}

export interface ConnectionDeps {
  clock: Clock;
  ids: IdGen;
  plans: PlanCatalog;
  drivers: ReadonlyMap<string, NetworkDriver>;
}

export const connectionNotFound = (id: string) => coded('not_found', 'CONNECTION_NOT_FOUND', `No connection ${id} in this workspace`);

export async function createConnection(
  stores: ConnectionStores,
  deps: ConnectionDeps,
  actor: Actor,
  input: { name: string; driver: string; credentials?: Record<string, unknown> },
): Promise<Connection> {
  authorize(actor.roles, 'connections', 'write');
  const driver = deps.drivers.get(input.driver);
  if (!driver) throw badRequest([`body.driver must be one of ${[...deps.drivers.keys()].join(', ')}`]);
  const name = input.name.trim();
  if (!name) throw badRequest(['body.name must not be blank']);

  // The workspace row lock serializes creations, so two at once cannot both squeeze under the quota.
  const workspace = await stores.identity.lockWorkspace(actor.workspaceId);
  if (!workspace) throw new DomainError('not_found', `Workspace ${actor.workspaceId} not found`);
  const plan = deps.plans[workspace.plan];
  if (driver.capabilities.official && !plan.officialConnections) {
    throw coded('forbidden', 'USER_PLAN_OFFICIAL_CONNECTIONS', 'Official connections are available on paid plans (PRO); upgrade to add one.');
  }
  assertConnectionHeadroom(plan, await stores.connections.count(actor.workspaceId));

  const credentials = driver.prepareCredentials ? driver.prepareCredentials(input.credentials ?? {}) : {};
  const now = deps.clock.now();
  const connection: Connection = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    name,
    driver: driver.name,
    status: 'DISCONNECTED',
    credentials,
    phoneNumber: null,
    qr: null,
    pairingCode: null,
    statusReason: null,
    routingKey: credentials.phoneNumberId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await stores.connections.insert(connection);
  return connection;
}

export async function listConnections(connections: ConnectionStore, actor: Actor): Promise<Connection[]> {
  authorize(actor.roles, 'workspace.read', 'read');
  return connections.list(actor.workspaceId);
}

export async function getConnection(connections: ConnectionStore, actor: Actor, id: string): Promise<Connection> {
  authorize(actor.roles, 'workspace.read', 'read');
  const connection = await connections.get(actor.workspaceId, id);
  if (!connection) throw connectionNotFound(id);
  return connection;
}

export async function updateConnection(
  stores: Pick<ConnectionStores, 'connections'>,
  deps: Pick<ConnectionDeps, 'clock' | 'drivers'>,
  actor: Actor,
  id: string,
  patch: { name?: string; credentials?: Record<string, unknown> },
): Promise<Connection> {
  authorize(actor.roles, 'connections', 'write');
  const connection = await lockedConnection(stores.connections, actor, id);
  const updated = { ...connection, updatedAt: deps.clock.now() };
  if (patch.name !== undefined) {
    if (!patch.name.trim()) throw badRequest(['body.name must not be blank']);
    updated.name = patch.name.trim();
  }
  if (patch.credentials !== undefined) {
    const driver = deps.drivers.get(connection.driver)!;
    if (!driver.prepareCredentials) throw badRequest(`A ${connection.driver} connection has no credentials to change`);
    // Fields left out keep their value, so a client can rotate just the access token.
    updated.credentials = driver.prepareCredentials({ ...connection.credentials, ...patch.credentials });
    updated.routingKey = updated.credentials.phoneNumberId ?? null;
  }
  await stores.connections.update(updated);
  return updated;
}

/** Deletes the connection; the worker ends its session (and pairing) afterwards. */
export async function deleteConnection(stores: ConnectionStores, actor: Actor, id: string): Promise<void> {
  authorize(actor.roles, 'connections', 'write');
  const connection = await lockedConnection(stores.connections, actor, id);
  await stores.outbox.enqueue(SESSION_QUEUE, { connectionId: connection.id, action: 'forget', driver: connection.driver });
  // Never dispatched to webhooks (spec 6.1); plugins holding work on the connection (campaigns'
  // reserved credits) learn of it here. The id is in the data: the log row's reference is cleared.
  await stores.events.publish({
    event: 'connection.update',
    workspaceId: connection.workspaceId,
    connectionId: connection.id,
    remoteJid: null,
    sender: connection.phoneNumber,
    data: { from: connection.status, to: 'DELETED', reason: 'deleted', connectionId: connection.id },
  });
  // Same transaction: no webhook keeps an id that no longer names a connection.
  await stores.webhooks.unbindConnection(connection.workspaceId, connection.id);
  await stores.connections.delete(id);
}

/** Asks for a session: pairing starts (QR / pairing code) or the session resumes. */
export async function requestConnect(
  stores: ConnectionStores,
  deps: Pick<ConnectionDeps, 'clock'>,
  actor: Actor,
  id: string,
  options: { pairingPhoneNumber?: string } = {},
): Promise<Connection> {
  return requestSession(stores, deps, actor, id, 'connect', { pairingPhoneNumber: options.pairingPhoneNumber });
}

/** Ends the session; with `logout` the pairing ends too and the next connect pairs afresh. */
export async function requestDisconnect(
  stores: ConnectionStores,
  deps: Pick<ConnectionDeps, 'clock'>,
  actor: Actor,
  id: string,
  options: { logout: boolean },
): Promise<Connection> {
  return requestSession(stores, deps, actor, id, options.logout ? 'logout' : 'disconnect');
}

/**
 * What a driver reports about the session. Reports that make no sense in the current status
 * (a late QR after the user disconnected) are ignored rather than failing the driver.
 */
export async function applySessionUpdate(
  stores: ConnectionStores,
  deps: Pick<ConnectionDeps, 'clock'>,
  connectionId: string,
  update: { event: ConnectionEvent; qr?: string; pairingCode?: string; phoneNumber?: string; reason?: string },
): Promise<Connection | undefined> {
  const connection = await stores.connections.lock(connectionId);
  if (!connection) return undefined;
  try {
    return await transition(stores, deps, connection, update.event, update);
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'conflict') return connection;
    throw error;
  }
}

export async function transition(
  stores: ConnectionStores,
  deps: Pick<ConnectionDeps, 'clock'>,
  connection: Connection,
  event: ConnectionEvent,
  details: { qr?: string; pairingCode?: string; phoneNumber?: string; reason?: string } = {},
): Promise<Connection> {
  const status = nextConnectionStatus(connection.status, event);
  const updated: Connection = {
    ...connection,
    status,
    // A QR or pairing code is only meaningful while the phone is being paired.
    qr: status === 'QR_PENDING' ? details.qr ?? (details.pairingCode ? null : connection.qr) : null,
    pairingCode: status === 'QR_PENDING' ? details.pairingCode ?? connection.pairingCode : null,
    phoneNumber: details.phoneNumber ?? connection.phoneNumber,
    statusReason: details.reason ?? null,
    updatedAt: deps.clock.now(),
  };
  await stores.connections.update(updated);
  if (updated.status !== connection.status) {
    await stores.events.publish({
      event: 'connection.update',
      workspaceId: connection.workspaceId,
      connectionId: connection.id,
      remoteJid: null,
      sender: updated.phoneNumber,
      data: { from: connection.status, to: updated.status, reason: updated.statusReason },
    });
  }
  return updated;
}

/** A person's request moves the session now; the worker then opens or closes it (the job's `action`). */
async function requestSession(
  stores: ConnectionStores,
  deps: Pick<ConnectionDeps, 'clock'>,
  actor: Actor,
  id: string,
  action: 'connect' | 'disconnect' | 'logout',
  job: { pairingPhoneNumber?: string } = {},
): Promise<Connection> {
  authorize(actor.roles, 'connections', 'write');
  const connection = await lockedConnection(stores.connections, actor, id);
  const updated = await transition(stores, deps, connection, action);
  await stores.outbox.enqueue(SESSION_QUEUE, { connectionId: id, action, ...job });
  return updated;
}

async function lockedConnection(connections: ConnectionStore, actor: Actor, id: string): Promise<Connection> {
  const connection = await connections.lock(id);
  if (!connection || connection.workspaceId !== actor.workspaceId) throw connectionNotFound(id);
  return connection;
}
