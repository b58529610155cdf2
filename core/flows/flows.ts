import type { Connection, ConnectionStore } from '../connections/connection.ts';
import { connectionNotFound } from '../connections/connections.ts';
import { DriverError, type NetworkDriver, type PlatformRequest } from '../connections/driver.ts';
import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { DomainError } from '../shared/errors.ts';
import type { Clock, IdGen } from '../shared/ports.ts';
import { driverView } from '../messaging/deliver.ts';
import { checkFlowJson, parseFlowJson, type FlowKind } from './flow-json.ts';

/**
 * Flows on official connections (spec 4.3 rows `flows`, `flows-encryption`; "Flow kinds"):
 * creating (and publishing) a Flow on the platform, and the phone number's encryption key.
 */

/** A phone number's Flow key pair, as stored (the private key opened). */
export interface FlowKey {
  phoneNumberId: string;
  /** The opaque id in the `dataExchangeUrl`. */
  endpointId: string;
  workspaceId: string;
  connectionId: string;
  publicKeyPem: string;
  privateKeyPem: string;
  /** The connection's app secret when the key was registered: the platform signs its requests with it. */
  appSecret: string;
  registeredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface FlowKeyStore {
  byPhoneNumber(phoneNumberId: string): Promise<FlowKey | undefined>;
  byEndpoint(endpointId: string): Promise<FlowKey | undefined>;
  /** Inserts or replaces the number's key. */
  save(key: FlowKey): Promise<void>;
}

export interface FlowStores {
  connections: ConnectionStore;
  flowKeys: FlowKeyStore;
}

export interface FlowDeps {
  clock: Clock;
  ids: IdGen;
  drivers: ReadonlyMap<string, NetworkDriver>;
  /** A fresh RSA-2048 pair, PEM encoded. */
  generateKeyPair(): { publicKeyPem: string; privateKeyPem: string };
  /** Where the platform reaches the number's data-exchange endpoint. */
  dataExchangeUrl(endpointId: string): string;
}

export interface CreateFlowInput {
  flowJson: unknown;
  publish?: boolean;
  name?: string;
  categories?: string[];
  endpointUri?: string;
}

export interface CreatedFlow {
  id: string;
  name: string;
  kind: FlowKind;
  status: 'DRAFT' | 'PUBLISHED';
  endpointUri: string | null;
  validationErrors: Array<Record<string, unknown>>;
}

/** What `GET`/`PUT …/flows-encryption` show of the number's key. */
export interface FlowEncryption {
  phoneNumberId: string;
  key: FlowKey | undefined;
  dataExchangeUrl: string | null;
}

/**
 * Creates the Flow on the platform, uploads its JSON and publishes it when asked and the
 * platform found nothing wrong. Format problems are all reported at once (400) before any call;
 * the platform's `validation_errors` come back as they are (a Flow with any stays a draft).
 */
export async function createFlow(stores: FlowStores, deps: FlowDeps, actor: Actor, connectionId: string, input: CreateFlowInput): Promise<CreatedFlow> {
  authorize(actor.roles, 'connections', 'write');
  const { connection, driver, phoneNumberId } = await flowConnection(stores, deps, actor, connectionId);
  const flowJson = parseFlowJson(input.flowJson);
  const key = ownKey(await stores.flowKeys.byPhoneNumber(phoneNumberId), actor);
  const checked = checkFlowJson(flowJson, { endpointUri: input.endpointUri, dataExchangeUrl: key?.registeredAt ? deps.dataExchangeUrl(key.endpointId) : null });
  const waba = connection.credentials.businessAccountId;
  if (!waba) throw new DomainError('unprocessable', 'The connection has no businessAccountId');
  const name = input.name ?? `flow_${deps.ids.next()}`;
  const created = await onPlatform<{ id?: string }>(driver, connection, {
    method: 'POST',
    path: `${encodeURIComponent(waba)}/flows`,
    json: { name, categories: input.categories ?? ['OTHER'], ...(checked.endpointUri ? { endpoint_uri: checked.endpointUri } : {}) },
    action: 'Creating the Flow',
  });
  if (!created.id) throw new DomainError('upstream_failed', 'The platform created no Flow id');
  const file = new Blob([JSON.stringify(checked.flowJson)], { type: 'application/json' });
  const asset = await onPlatform<{ validation_errors?: unknown[] }>(driver, connection, {
    method: 'POST',
    path: `${encodeURIComponent(created.id)}/assets`,
    form: { name: 'flow.json', asset_type: 'FLOW_JSON', file: { blob: file, fileName: 'flow.json' } },
    action: 'Uploading the Flow JSON',
  });
  const validationErrors = (asset.validation_errors ?? []) as Array<Record<string, unknown>>;
  let published = false;
  if (input.publish && validationErrors.length === 0) {
    await onPlatform(driver, connection, { method: 'POST', path: `${encodeURIComponent(created.id)}/publish`, action: 'Publishing the Flow' });
    published = true;
  }
  return { id: created.id, name, kind: checked.kind, status: published ? 'PUBLISHED' : 'DRAFT', endpointUri: checked.endpointUri ?? null, validationErrors };
}

/**
 * Makes (or, with `rotate`, replaces) the number's RSA-2048 pair and registers its public half
 * with the platform; needs the connection's app secret. The key belongs to the phone number: it
 * survives deleting the connection, and calling again re-registers it.
 */
export async function provisionFlowKey(stores: FlowStores, deps: FlowDeps, actor: Actor, connectionId: string, options: { rotate?: boolean }): Promise<FlowEncryption> {
  authorize(actor.roles, 'connections', 'write');
  const { connection, driver, phoneNumberId } = await flowConnection(stores, deps, actor, connectionId);
  const appSecret = connection.credentials.appSecret;
  if (!appSecret) throw new DomainError('unprocessable', 'Flow encryption needs the connection’s platform app secret (credentials.appSecret)');
  const existing = ownKey(await stores.flowKeys.byPhoneNumber(phoneNumberId), actor);
  const pair = existing && !options.rotate ? { publicKeyPem: existing.publicKeyPem, privateKeyPem: existing.privateKeyPem } : deps.generateKeyPair();
  await onPlatform(driver, connection, {
    method: 'POST',
    path: `${encodeURIComponent(phoneNumberId)}/whatsapp_business_encryption`,
    form: { business_public_key: pair.publicKeyPem },
    action: 'Registering the Flow public key',
  });
  const now = deps.clock.now();
  const key: FlowKey = {
    phoneNumberId,
    endpointId: existing?.endpointId ?? deps.ids.next(),
    workspaceId: actor.workspaceId,
    connectionId: connection.id,
    ...pair,
    appSecret,
    registeredAt: now,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  await stores.flowKeys.save(key);
  return { phoneNumberId, key, dataExchangeUrl: deps.dataExchangeUrl(key.endpointId) };
}

/** The number's key as this workspace sees it, and its `dataExchangeUrl`. */
export async function flowEncryption(stores: FlowStores, deps: FlowDeps, actor: Actor, connectionId: string): Promise<FlowEncryption> {
  authorize(actor.roles, 'connections', 'read');
  const { phoneNumberId } = await flowConnection(stores, deps, actor, connectionId);
  const key = ownKey(await stores.flowKeys.byPhoneNumber(phoneNumberId), actor);
  return { phoneNumberId, key, dataExchangeUrl: key ? deps.dataExchangeUrl(key.endpointId) : null };
}

/** The connection, its driver and phone number id; 422 where the network has no Flows. */
async function flowConnection(stores: FlowStores, deps: Pick<FlowDeps, 'drivers'>, actor: Actor, connectionId: string) {
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  const driver = deps.drivers.get(connection.driver);
  if (!driver?.capabilities.flows || !driver.platformRequest) throw new DomainError('unprocessable', 'Flows exist only on official connections');
  const phoneNumberId = connection.credentials.phoneNumberId;
  if (!phoneNumberId) throw new DomainError('unprocessable', 'The connection has no phoneNumberId');
  return { connection, driver, phoneNumberId };
}

async function onPlatform<T>(driver: NetworkDriver, connection: Connection, request: PlatformRequest): Promise<T> {
  try {
    return (await driver.platformRequest!(driverView(connection), request)) as T;
  } catch (error) {
    if (error instanceof DriverError) throw new DomainError(error.retryable ? 'upstream_failed' : 'unprocessable', `The platform refused: ${error.message}`);
    throw error;
  }
}

/**
 * A number's key as far as this workspace may see it. A number that moved to another workspace
 * (its new owner proved control with their own credentials) gets a fresh pair and endpoint on
 * its first PUT: another workspace's private key is never reused and its endpoint never shown.
 */
function ownKey(key: FlowKey | undefined, actor: Actor): FlowKey | undefined {
  return key && key.workspaceId === actor.workspaceId ? key : undefined;
}
