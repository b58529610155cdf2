import { workspaceReads, type WorkspaceRecordStore } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { badRequest, notFound } from '../../shared/errors.ts';
import type { PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen, Random } from '../../shared/ports.ts';
import { base64url } from '../../tokens/secret.ts';
import { isHttpUrl } from '../../webhooks/webhook.ts';
import { subscriberDeliveries } from './subscriber-deliveries.ts';
import { queueDelivery, type DeliveryEndpoint, type DispatchDeps, type DispatchStores, type WebhookSender } from '../../webhooks/dispatch.ts';
import { REQUEST_TIMEOUT_MS } from '../../webhooks/delivery.ts';
import { HELPDESK_EVENT_HEADER, HELPDESK_SIGNATURE_HEADER, helpdeskSignature } from './webhook-signature.ts';
import { HELPDESK_EVENT_TYPES, type HelpdeskEventType } from '../events.ts';
import type { InboxStore } from '../inboxes/inboxes.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';
import { assertOutboundAllowed, type OutboundPolicy } from '../../shared/outbound-policy.ts';

/**
 * A helpdesk webhook (spec 2.9): the events it subscribes to, optionally one inbox (omitted: the
 * whole workspace), and a signing secret chosen by the caller — or generated and never shown,
 * "so signatures cannot then be verified". Managing them is helpdesk configuration (2.14:
 * Owner, Admin, Manager); creating and changing them needs the PRO plan like every helpdesk write.
 */
export interface HelpdeskWebhook {
  id: string;
  workspaceId: string;
  url: string;
  subscriptions: HelpdeskEventType[];
  inboxId: string | null;
  signingSecret: string;
  /** False when the service generated the secret (it is never returned). */
  secretChosen: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface HelpdeskWebhookInput {
  url: string;
  subscriptions: string[];
  inboxId?: string | null;
  signingSecret?: string;
}

export const SIGNING_SECRET_LENGTH = { min: 16, max: 256 } as const;

/** `delete` deletes the webhook and its delivery history. */
export interface HelpdeskWebhookStore extends WorkspaceRecordStore<HelpdeskWebhook> {
  /** Webhooks of the workspace subscribed to the event, for that inbox or the whole workspace. */
  subscribedTo(workspaceId: string, event: HelpdeskEventType, inboxId: string | null): Promise<HelpdeskWebhook[]>;
}

export interface HelpdeskWebhookStores {
  helpdeskWebhooks: HelpdeskWebhookStore;
  inboxes: InboxStore;
  plans: WorkspacePlans;
}

export interface HelpdeskWebhookDeps {
  clock: Clock;
  ids: IdGen;
  random: Random;
  outbound: OutboundPolicy;
}

export async function createHelpdeskWebhook(stores: HelpdeskWebhookStores, deps: HelpdeskWebhookDeps, actor: Actor, input: HelpdeskWebhookInput): Promise<HelpdeskWebhook> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  await validate(stores, actor, input);
  await assertOutboundAllowed(deps.outbound, 'body.url', input.url);
  const now = deps.clock.now();
  const webhook: HelpdeskWebhook = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    url: input.url,
    subscriptions: unique(input.subscriptions) as HelpdeskEventType[],
    inboxId: input.inboxId ?? null,
    signingSecret: input.signingSecret ?? `hdsec_${base64url(deps.random.bytes(32))}`,
    secretChosen: input.signingSecret !== undefined,
    createdAt: now,
    updatedAt: now,
  };
  await stores.helpdeskWebhooks.insert(webhook);
  return webhook;
}

const helpdeskWebhookReads = workspaceReads<HelpdeskWebhook>('helpdesk.configure', (id: string) => notFound(`Helpdesk webhook ${id} not found`));

export const listHelpdeskWebhooks = (stores: HelpdeskWebhookStores, actor: Actor, request: PageRequest) => helpdeskWebhookReads.list(stores.helpdeskWebhooks, actor, request);

export const getHelpdeskWebhook = (stores: HelpdeskWebhookStores, actor: Actor, id: string) => helpdeskWebhookReads.get(stores.helpdeskWebhooks, actor, id);


/** Fields left out keep their value; `inboxId: null` widens to the workspace; a new `signingSecret` signs from now on. */
export async function updateHelpdeskWebhook(
  stores: HelpdeskWebhookStores,
  deps: HelpdeskWebhookDeps,
  actor: Actor,
  id: string,
  patch: Partial<HelpdeskWebhookInput>,
): Promise<HelpdeskWebhook> {
  const webhook = await getHelpdeskWebhook(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const input: HelpdeskWebhookInput = {
    url: patch.url ?? webhook.url,
    subscriptions: patch.subscriptions ?? webhook.subscriptions,
    inboxId: patch.inboxId === undefined ? webhook.inboxId : patch.inboxId,
    signingSecret: patch.signingSecret,
  };
  await validate(stores, actor, input);
  if (patch.url !== undefined) await assertOutboundAllowed(deps.outbound, 'body.url', input.url);
  const updated: HelpdeskWebhook = {
    ...webhook,
    url: input.url,
    subscriptions: unique(input.subscriptions) as HelpdeskEventType[],
    inboxId: input.inboxId ?? null,
    signingSecret: patch.signingSecret ?? webhook.signingSecret,
    secretChosen: patch.signingSecret !== undefined || webhook.secretChosen,
    updatedAt: deps.clock.now(),
  };
  await stores.helpdeskWebhooks.update(updated);
  return updated;
}

export async function deleteHelpdeskWebhook(stores: HelpdeskWebhookStores, actor: Actor, id: string): Promise<void> {
  await getHelpdeskWebhook(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  await stores.helpdeskWebhooks.delete(id);
}

const helpdeskDeliveryLog = subscriberDeliveries(getHelpdeskWebhook);

/** Delivery history of a helpdesk webhook, newest first, with every attempt (the engine's own history). */
export const helpdeskWebhookDeliveries = helpdeskDeliveryLog.list;

/** A failed helpdesk delivery sent again by hand: a fresh round of three attempts. */
export const redeliverHelpdeskDelivery = helpdeskDeliveryLog.redeliver;

/** The body of a helpdesk delivery (spec 6.5): `{ event, data, deliveredAt }`, `data.type` repeating the event. */
export function helpdeskEnvelope(event: string, data: Record<string, unknown>, deliveredAt: Date): string {
  return JSON.stringify({ event, data, deliveredAt: deliveredAt.toISOString() });
}

/**
 * One logged helpdesk event to every webhook that hears it: one delivery each, on the delivery
 * engine of connection webhooks (3 attempts, backoff from 5 s, 10 s timeout, history).
 * Idempotent: a delivery's id comes from (webhook, event), so running it again adds nothing.
 */
export async function fanOutHelpdeskEvent(
  stores: { helpdeskWebhooks: HelpdeskWebhookStore } & Pick<DispatchStores, 'deliveries' | 'outbox'>,
  deps: DispatchDeps,
  logged: { eventId: string; data: Record<string, unknown> & { type: HelpdeskEventType; accountId: string; inboxId?: string | null } },
): Promise<number> {
  const { data } = logged;
  const webhooks = await stores.helpdeskWebhooks.subscribedTo(data.accountId, data.type, data.inboxId ?? null);
  const body = helpdeskEnvelope(data.type, data, deps.clock.now());
  for (const webhook of webhooks) {
    await queueDelivery(stores, deps, { webhookId: webhook.id, workspaceId: webhook.workspaceId, target: HELPDESK_TARGET, event: data.type, eventIds: [logged.eventId], body });
  }
  return webhooks.length;
}

/** The event name of a test request (not one of the 21: a consumer can tell it apart). */
export const TEST_EVENT = 'helpdesk.webhook.test';

/**
 * `POST /v3/helpdesk/webhooks/{id}/test` "runs at once": one signed request, answered with the
 * status the endpoint gave and how long it took (no retries, nothing in the delivery history).
 * An endpoint that does not answer gives `status: null` and the error.
 */
export async function testHelpdeskWebhook(
  stores: HelpdeskWebhookStores,
  deps: { clock: Clock; ids: IdGen },
  sender: WebhookSender,
  actor: Actor,
  id: string,
): Promise<{ status: number | null; durationMs: number; error?: string }> {
  const webhook = await getHelpdeskWebhook(stores, actor, id);
  authorize(actor.roles, 'helpdesk.configure', 'write');
  const now = deps.clock.now();
  const body = helpdeskEnvelope(TEST_EVENT, { type: TEST_EVENT, accountId: webhook.workspaceId, webhookId: webhook.id, testId: deps.ids.next() }, now);
  const outcome = await sender.post(webhook.url, body, helpdeskDeliveryHeaders(webhook, TEST_EVENT, body), REQUEST_TIMEOUT_MS);
  const durationMs = Math.round(outcome.durationMs);
  return 'status' in outcome ? { status: outcome.status, durationMs } : { status: null, durationMs, error: outcome.error };
}

/** Delivery target name of helpdesk webhooks on the shared engine. */
export const HELPDESK_TARGET = 'helpdesk';

/** Spec 6.5 delivery headers: `X-Helpdesk-Event` and `X-Helpdesk-Signature` over the raw body. */
export function helpdeskDeliveryHeaders(webhook: HelpdeskWebhook, event: string, body: string, deliveryId?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Switchboard-Webhooks/1',
    [HELPDESK_EVENT_HEADER]: event,
    [HELPDESK_SIGNATURE_HEADER]: helpdeskSignature(webhook.signingSecret, body),
    ...(deliveryId && { 'x-switchboard-delivery': deliveryId }),
  };
}

/** Where a helpdesk delivery goes now: the webhook's current URL, signed with its current secret. */
export function helpdeskEndpoint(webhook: HelpdeskWebhook, delivery: { id: string; event: string }): DeliveryEndpoint {
  return { url: webhook.url, headers: (body) => helpdeskDeliveryHeaders(webhook, delivery.event, body, delivery.id) };
}

/** Whether the webhook hears of an event about this inbox (null: an event of the whole workspace). */
export function hears(webhook: HelpdeskWebhook, event: HelpdeskEventType, inboxId: string | null): boolean {
  return webhook.subscriptions.includes(event) && (webhook.inboxId === null || webhook.inboxId === inboxId);
}

async function validate(stores: HelpdeskWebhookStores, actor: Actor, input: HelpdeskWebhookInput): Promise<void> {
  const problems: string[] = [];
  if (!isHttpUrl(input.url)) problems.push('body.url must be an absolute http(s) URL');
  if (!Array.isArray(input.subscriptions) || input.subscriptions.length === 0) problems.push('body.subscriptions must list at least one event type');
  else {
    const unknown = input.subscriptions.filter((s) => !(HELPDESK_EVENT_TYPES as readonly string[]).includes(s));
    if (unknown.length > 0) problems.push(`body.subscriptions has unknown event type(s) ${unknown.join(', ')}; allowed: ${HELPDESK_EVENT_TYPES.join(', ')}`);
  }
  const secret = input.signingSecret;
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < SIGNING_SECRET_LENGTH.min || secret.length > SIGNING_SECRET_LENGTH.max)) {
    problems.push(`body.signingSecret must be ${SIGNING_SECRET_LENGTH.min} to ${SIGNING_SECRET_LENGTH.max} characters`);
  }
  if (input.inboxId != null && !(await stores.inboxes.get(actor.workspaceId, input.inboxId))) problems.push(`body.inboxId names no inbox of this workspace`);
  if (problems.length > 0) throw badRequest(problems);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
