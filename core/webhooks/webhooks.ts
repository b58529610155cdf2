import { workspaceReads } from '../shared/workspace-records.ts';
import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { badRequest, notFound, type DomainError } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { Clock, IdGen, Random } from '../shared/ports.ts';
import { base64url } from '../tokens/secret.ts';
import type { ConnectionStore } from '../connections/connection.ts';
import { validateWebhookSettings, type ConnectionEventName, type Webhook, type WebhookSettings } from './webhook.ts';
import { assertOutboundAllowed, type OutboundPolicy } from '../shared/outbound-policy.ts';

export interface WebhookStore {
  insert(webhook: Webhook): Promise<void>;
  get(workspaceId: string, id: string): Promise<Webhook | undefined>;
  /** Any workspace: the delivery engine knows only the id. */
  find(id: string): Promise<Webhook | undefined>;
  findMany(ids: readonly string[]): Promise<Webhook[]>;
  list(workspaceId: string, request: PageRequest): Promise<Page<Webhook>>;
  update(webhook: Webhook): Promise<void>;
  delete(id: string): Promise<void>;
  /** Takes a deleted connection out of every webhook of the workspace bound to it. */
  unbindConnection(workspaceId: string, connectionId: string): Promise<void>;
  /** Webhooks of the workspace bound to the connection and subscribed to the event. */
  subscribedTo(workspaceId: string, connectionId: string, event: string): Promise<Webhook[]>;
  /** Webhooks of these workspaces bound to any of these connections (a fan-out batch's candidates). */
  boundTo(workspaceIds: readonly string[], connectionIds: readonly string[]): Promise<Webhook[]>;
}

export interface WebhookStores {
  webhooks: WebhookStore;
  connections: ConnectionStore;
}

export interface WebhookDeps {
  clock: Clock;
  ids: IdGen;
  random: Random;
  outbound: OutboundPolicy;
}

/** Connection webhooks (spec 2.8, 4.4): Owners, Admins and Managers ("connections, integrations, webhooks"). */
export async function createWebhook(stores: WebhookStores, deps: WebhookDeps, actor: Actor, settings: WebhookSettings): Promise<Webhook> {
  authorize(actor.roles, 'connections', 'write');
  validateWebhookSettings(settings);
  await assertOutboundAllowed(deps.outbound, 'body.url', settings.url);
  await assertConnections(stores, actor, settings.connections ?? []);
  const now = deps.clock.now();
  const webhook: Webhook = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    url: settings.url,
    events: [...new Set(settings.events)] as ConnectionEventName[],
    connections: [...new Set(settings.connections ?? [])],
    hmacEnabled: settings.hmacEnabled ?? false,
    secret: newSecret(deps.random),
    messageGroupDelay: settings.messageGroupDelay ?? null,
    enableSimulateTyping: settings.enableSimulateTyping ?? false,
    createdAt: now,
    updatedAt: now,
  };
  await stores.webhooks.insert(webhook);
  return webhook;
}

const webhookReads = workspaceReads<Webhook>('connections', webhookNotFound);

export const listWebhooks = (stores: WebhookStores, actor: Actor, request: PageRequest) => webhookReads.list(stores.webhooks, actor, request);

export const getWebhook = (stores: WebhookStores, actor: Actor, id: string) => webhookReads.get(stores.webhooks, actor, id);

/**
 * A change of settings. `connections` replaces the bound set; `addConnections` and
 * `removeConnections` change it without resending it (spec 4.4: "update, including adding
 * `connections`"), applied after `connections` when both are sent.
 */
export interface WebhookPatch extends Partial<WebhookSettings> {
  addConnections?: string[];
  removeConnections?: string[];
}

/** Changes settings; fields left out keep their value. */
export async function updateWebhook(stores: WebhookStores, deps: WebhookDeps, actor: Actor, id: string, patch: WebhookPatch): Promise<Webhook> {
  authorize(actor.roles, 'connections', 'write');
  const webhook = await existing(stores, actor, id);
  const removed = new Set(patch.removeConnections ?? []);
  const both = [...new Set(patch.addConnections ?? [])].filter((c) => removed.has(c));
  if (both.length > 0) throw badRequest([`body.addConnections and body.removeConnections both name ${both.join(', ')}`]);
  // Removing a connection that is not bound changes nothing: a retried request gets the same result.
  const connections = [...(patch.connections ?? webhook.connections), ...(patch.addConnections ?? [])].filter((c) => !removed.has(c));
  const settings: WebhookSettings = {
    url: patch.url ?? webhook.url,
    events: patch.events ?? webhook.events,
    connections,
    hmacEnabled: patch.hmacEnabled ?? webhook.hmacEnabled,
    messageGroupDelay: patch.messageGroupDelay === undefined ? webhook.messageGroupDelay : patch.messageGroupDelay,
    enableSimulateTyping: patch.enableSimulateTyping ?? webhook.enableSimulateTyping,
  };
  validateWebhookSettings(settings);
  if (patch.url !== undefined) await assertOutboundAllowed(deps.outbound, 'body.url', patch.url);
  if (patch.connections) await assertConnections(stores, actor, patch.connections);
  if (patch.addConnections) await assertConnections(stores, actor, patch.addConnections, 'body.addConnections');
  const updated: Webhook = {
    ...webhook,
    url: settings.url,
    events: [...new Set(settings.events)] as ConnectionEventName[],
    connections: [...new Set(settings.connections)],
    hmacEnabled: settings.hmacEnabled!,
    messageGroupDelay: settings.messageGroupDelay ?? null,
    enableSimulateTyping: settings.enableSimulateTyping!,
    updatedAt: deps.clock.now(),
  };
  await stores.webhooks.update(updated);
  return updated;
}

export async function deleteWebhook(stores: WebhookStores, actor: Actor, id: string): Promise<void> {
  authorize(actor.roles, 'connections', 'write');
  await existing(stores, actor, id);
  await stores.webhooks.delete(id);
}

/** The signing secret, for those who manage webhooks ("read once and store it"). */
export async function webhookSecret(stores: WebhookStores, actor: Actor, id: string): Promise<string> {
  authorize(actor.roles, 'connections', 'write');
  return (await existing(stores, actor, id)).secret;
}

/** A new secret; deliveries signed from now on use it, and the old one stops verifying at once. */
export async function rotateWebhookSecret(stores: WebhookStores, deps: WebhookDeps, actor: Actor, id: string): Promise<string> {
  authorize(actor.roles, 'connections', 'write');
  const webhook = await existing(stores, actor, id);
  const secret = newSecret(deps.random);
  await stores.webhooks.update({ ...webhook, secret, updatedAt: deps.clock.now() });
  return secret;
}

function newSecret(random: Random): string {
  return `whsec_${base64url(random.bytes(32))}`;
}

function webhookNotFound(id: string): DomainError {
  return notFound(`Webhook ${id} not found`);
}

async function existing(stores: WebhookStores, actor: Actor, id: string): Promise<Webhook> {
  const webhook = await stores.webhooks.get(actor.workspaceId, id);
  if (!webhook) throw webhookNotFound(id);
  return webhook;
}

async function assertConnections(stores: WebhookStores, actor: Actor, ids: string[], field = 'body.connections'): Promise<void> {
  const missing: string[] = [];
  for (const id of new Set(ids)) if (!(await stores.connections.get(actor.workspaceId, id))) missing.push(id);
  if (missing.length > 0) throw badRequest([`${field} names unknown connection(s): ${missing.join(', ')}`]);
}
