import type { Outbox } from '../shared/outbox.ts';
import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import type { Clock, IdGen } from '../shared/ports.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { openOrSlide, orderBatch, dueForFlush, type BatchWindow } from './batching.ts';
import { redeliver, type AttemptOutcome, type DeliveryState } from './delivery.ts';
import { signDelivery, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './signature.ts';
import { subscribes, type Webhook } from './webhook.ts';
import type { WebhookStore } from './webhooks.ts';

/**
 * Queues of the delivery engine: a batching window's flush, and the fan-out of one event (the
 * fallback when a batch fan-out fails, and the jobs queued before events waited in a table).
 * Deliveries themselves are claimed from their own table (delivery-engine.ts).
 */
export const FANOUT_QUEUE = 'webhooks.fanout';
export const FLUSH_QUEUE = 'webhooks.flush';

/** An event of the log, in the envelope of spec 6.1. */
export interface LoggedEvent {
  id: string;
  workspaceId: string;
  connectionId: string | null;
  event: string;
  remoteJid: string | null;
  payload: { event: string; connectionId: string; remoteJid: string | null; sender: string | null; data: unknown };
}

/** The kind of webhook a delivery goes to: `connection` (spec 2.8), or a plugin's (`helpdesk`, 2.9). */
export type DeliveryTarget = string;
export const CONNECTION_TARGET: DeliveryTarget = 'connection';

export interface Delivery {
  id: string;
  webhookId: string;
  target: DeliveryTarget;
  workspaceId: string;
  event: string;
  /** The events in the request (one, or a batch). */
  eventIds: string[];
  /** The exact JSON body sent on every attempt. */
  body: string;
  state: DeliveryState;
  attempts: number;
  /** When the next attempt is due; null once settled (SUCCEEDED, FAILED). */
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface DeliveryAttempt {
  deliveryId: string;
  /** Position in the delivery's history; a redelivery's attempts follow the earlier rounds' (4, 5, 6). */
  attempt: number;
  at: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface DeliveryStore {
  /** Inserts unless a delivery with this id exists; true when inserted. */
  insert(delivery: Delivery): Promise<boolean>;
  /**
   * Inserts each unless a delivery with its id exists (a replayed fan-out); those `claim` names
   * are inserted held by it. Returns the ids inserted.
   */
  insertMany(deliveries: readonly Delivery[], claim?: BirthClaim): Promise<Set<string>>;
  get(id: string): Promise<Delivery | undefined>;
  lock(id: string): Promise<Delivery | undefined>;
  /** Its state, attempts and due time. */
  update(delivery: Delivery): Promise<void>;
  list(webhookId: string, request: PageRequest): Promise<Page<Delivery & { attemptLog: DeliveryAttempt[] }>>;
}

/** Deliveries a fan-out inserts already claimed (`ids`), by `claimId` until `claimedUntil`. */
export interface BirthClaim {
  claimId: string;
  claimedUntil: Date;
  ids: ReadonlySet<string>;
}

/** A delivery a fan-out inserted held by its worker's claim. */
export type BornClaimed = Delivery & Pick<BirthClaim, 'claimId' | 'claimedUntil'>;

/**
 * A worker's claim on the deliveries its fan-out makes, so it sends them without claiming them
 * again: at most `limit` of them, none of the webhooks in `skipWebhooks` (it holds enough of theirs).
 */
export interface FanOutClaim {
  claimId: string;
  claimedUntil: Date;
  limit: number;
  skipWebhooks: ReadonlySet<string>;
}

/** A held batch of a contact's messages for one webhook. */
export interface Batch {
  webhookId: string;
  connectionId: string;
  remoteJid: string;
  window: BatchWindow;
  events: LoggedEvent[];
}

export interface BatchStore {
  lock(webhookId: string, connectionId: string, remoteJid: string): Promise<Batch | undefined>;
  save(batch: Batch): Promise<void>;
  delete(webhookId: string, connectionId: string, remoteJid: string): Promise<void>;
}

export interface EventLog {
  get(id: string): Promise<LoggedEvent | undefined>;
}

/** Events written since the last fan-out, taken in a batch (a rolled-back take leaves them waiting). */
export interface PendingFanouts {
  take(limit: number): Promise<LoggedEvent[]>;
}

/** Where a delivery goes now and how each attempt is signed (the webhook's current URL and secret). */
export interface DeliveryEndpoint {
  url: string;
  headers(body: string, timestampSeconds: number): Record<string, string>;
}

/** Finds the endpoints of deliveries' webhooks, whatever their kind; none for a webhook that is gone. */
export interface DeliveryEndpoints {
  findAll(deliveries: readonly Pick<Delivery, 'target' | 'webhookId' | 'id' | 'event'>[]): Promise<Map<string, DeliveryEndpoint | undefined>>;
}

export interface DispatchStores {
  webhooks: WebhookStore;
  deliveries: DeliveryStore;
  batches: BatchStore;
  eventLog: EventLog;
  fanouts: PendingFanouts;
  outbox: Outbox;
}

export interface DispatchDeps {
  clock: Clock;
  ids: IdGen;
  /** A stable id for (webhook, event): fanning the same event out twice makes one delivery. */
  deliveryIdFor(webhookId: string, eventIds: string[]): string;
}

/** Sends one signed request; never throws (a failure is an outcome). */
export interface WebhookSender {
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<AttemptOutcome & { durationMs: number }>;
}

/** Shows "typing…" to a contact during a batching window (enableSimulateTyping). */
export interface TypingSimulator {
  typing(connectionId: string, remoteJid: string, on: boolean): Promise<void>;
}

/**
 * Fans the events written since the last fan-out out to their webhooks, a batch at a time (the
 * delivery engine's first step). Run in one transaction: a crash before it commits leaves the
 * events waiting, and the deliveries it makes are due at once. With `claim`, the deliveries it
 * may hold are made held by it (`claimed`): the worker sends them at once, and if it dies they
 * are due again when the claim lapses, as claimed ones are.
 */
export async function fanOutPending(
  stores: DispatchStores,
  deps: DispatchDeps,
  limit: number,
  claim?: FanOutClaim,
): Promise<{ taken: number; deliveries: number; claimed: BornClaimed[]; typingStarted: Batch[] }> {
  const events = await stores.fanouts.take(limit);
  return { taken: events.length, ...(await fanOutEvents(stores, deps, events, claim)) };
}

/** Fans one logged event out (a fan-out job queued before events waited in a table of their own). */
export async function fanOut(stores: DispatchStores, deps: DispatchDeps, eventId: string): Promise<{ typingStarted: Batch[] }> {
  const event = await stores.eventLog.get(eventId);
  return fanOutEvents(stores, deps, event ? [event] : []);
}

/**
 * Fans events out to the webhooks that want them: one delivery each, or, with a batching
 * window, into the contact's held batch (the window slides with every message). Idempotent:
 * fanning the same events out twice changes nothing.
 */
export async function fanOutEvents(
  stores: DispatchStores,
  deps: DispatchDeps,
  events: readonly LoggedEvent[],
  claim?: FanOutClaim,
): Promise<{ deliveries: number; claimed: BornClaimed[]; typingStarted: Batch[] }> {
  const dispatched = events.filter((e): e is LoggedEvent & { connectionId: string } => e.connectionId !== null);
  if (dispatched.length === 0) return { deliveries: 0, claimed: [], typingStarted: [] };
  const webhooks = await stores.webhooks.boundTo(distinct(dispatched.map((e) => e.workspaceId)), distinct(dispatched.map((e) => e.connectionId)));
  const typingStarted: Batch[] = [];
  const deliveries: Delivery[] = [];
  for (const event of dispatched) {
    for (const webhook of webhooks) {
      if (webhook.workspaceId !== event.workspaceId || !subscribes(webhook, event.event, event.connectionId)) continue;
      if (webhook.messageGroupDelay && event.event === 'messages.upsert' && event.remoteJid) {
        const batch = await hold(stores, deps, webhook, event);
        if (batch && batch.window.version === 1 && webhook.enableSimulateTyping) typingStarted.push(batch);
        continue;
      }
      deliveries.push(newDelivery(deps, connectionDelivery(webhook, [event], JSON.stringify(event.payload))));
    }
  }
  const held = claim ? deliveries.filter((d) => !claim.skipWebhooks.has(d.webhookId)).slice(0, Math.max(0, claim.limit)) : [];
  const birth = claim && held.length > 0 ? { claimId: claim.claimId, claimedUntil: claim.claimedUntil, ids: new Set(held.map((d) => d.id)) } : undefined;
  const inserted = await stores.deliveries.insertMany(deliveries, birth);
  // One inserted before (a replayed fan-out) is not ours: the claim loop takes it as any other.
  const claimed = birth ? held.filter((d) => inserted.has(d.id)).map((d) => ({ ...d, claimId: birth.claimId, claimedUntil: birth.claimedUntil })) : [];
  return { deliveries: deliveries.length, claimed, typingStarted };
}

/** Delivers a batch whose window has closed; an older flush of a slid window does nothing. */
export async function flushBatch(
  stores: DispatchStores,
  deps: DispatchDeps,
  key: { webhookId: string; connectionId: string; remoteJid: string; version: number },
): Promise<Batch | undefined> {
  const batch = await stores.batches.lock(key.webhookId, key.connectionId, key.remoteJid);
  if (!batch || batch.window.version !== key.version) return undefined;
  const now = deps.clock.now();
  if (!dueForFlush(batch.window, key.version, now)) {
    // The queue counts a job's wait from its transaction's start, which can be a little before
    // the window's arrival time, so this flush may run just early: it must not be dropped, or
    // the batch would be held for ever. Try again at the window's end.
    await scheduleFlush(stores, batch, now);
    return undefined;
  }
  await stores.batches.delete(key.webhookId, key.connectionId, key.remoteJid);
  const webhook = await webhookById(stores, batch);
  if (!webhook) return batch;
  const events = orderBatch(batch.events.map((e) => ({ e, messageTimestamp: timestampOf(e) }))).map(({ e }) => e);
  const first = events[0]!.payload;
  const body = JSON.stringify({ event: 'messages.upsert', connectionId: first.connectionId, remoteJid: first.remoteJid, sender: first.sender, data: events.map((e) => e.payload.data) });
  await queueDelivery(stores, deps, connectionDelivery(webhook, events, body));
  return batch;
}

async function hold(stores: DispatchStores, deps: DispatchDeps, webhook: Webhook, event: LoggedEvent): Promise<Batch | undefined> {
  const existing = await stores.batches.lock(webhook.id, event.connectionId!, event.remoteJid!);
  if (existing?.events.some((e) => e.id === event.id)) return undefined;
  const window = openOrSlide(existing?.window, deps.clock.now(), webhook.messageGroupDelay!);
  const batch: Batch = { webhookId: webhook.id, connectionId: event.connectionId!, remoteJid: event.remoteJid!, window, events: [...(existing?.events ?? []), event] };
  await stores.batches.save(batch);
  await scheduleFlush(stores, batch, deps.clock.now());
  return batch;
}

/** A flush job for the batch's current window version, due when the window closes. */
async function scheduleFlush(stores: Pick<DispatchStores, 'outbox'>, batch: Batch, now: Date): Promise<void> {
  await stores.outbox.enqueue(
    FLUSH_QUEUE,
    { webhookId: batch.webhookId, connectionId: batch.connectionId, remoteJid: batch.remoteJid, version: batch.window.version },
    // No dedupe key: versions start again at 1 with every new window, so a key built on them
    // would hit an earlier window's finished job (pg-boss keeps it for days) and the new window
    // would never be flushed. A replayed fan-out is already a no-op (the event is held once).
    { startAfterSeconds: Math.max(0, (batch.window.closesAt.getTime() - now.getTime()) / 1000) },
  );
}

type DeliveryInput = { webhookId: string; workspaceId: string; target: DeliveryTarget; event: string; eventIds: string[]; body: string };

function connectionDelivery(webhook: Webhook, events: readonly LoggedEvent[], body: string): DeliveryInput {
  return { webhookId: webhook.id, workspaceId: webhook.workspaceId, target: CONNECTION_TARGET, event: events[0]!.event, eventIds: events.map((e) => e.id), body };
}

/**
 * A delivery of any webhook kind, due at once: the delivery engine claims it (deliveries are
 * their own queue, core/webhooks/delivery-engine.ts). Idempotent: the id is derived from
 * (webhook, events), so queueing the same events twice makes one delivery. Attempts, retries,
 * history and redelivery are then the same for every kind.
 */
export async function queueDelivery(stores: Pick<DispatchStores, 'deliveries'>, deps: DispatchDeps, input: DeliveryInput): Promise<void> {
  await stores.deliveries.insert(newDelivery(deps, input));
}

function newDelivery(deps: DispatchDeps, input: DeliveryInput): Delivery {
  const now = deps.clock.now();
  return { id: deps.deliveryIdFor(input.webhookId, input.eventIds), ...input, state: 'PENDING', attempts: 0, nextAttemptAt: now, createdAt: now, updatedAt: now };
}

function distinct(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * The endpoint of a connection webhook: signed when `hmacEnabled` (spec 6.4). `sign` computes
 * `signDelivery`'s value; a host may pass a native one (every delivery pays for it).
 */
export function connectionEndpoint(webhook: Webhook, delivery: Pick<Delivery, 'id' | 'event'>, sign: typeof signDelivery = signDelivery): DeliveryEndpoint {
  return {
    url: webhook.url,
    headers(body, timestamp) {
      const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Switchboard-Webhooks/1', 'x-switchboard-delivery': delivery.id, 'x-switchboard-event': delivery.event };
      if (webhook.hmacEnabled) {
        headers[SIGNATURE_HEADER] = sign(webhook.secret, timestamp, body);
        headers[TIMESTAMP_HEADER] = String(timestamp);
      }
      return headers;
    },
  };
}

async function webhookById(stores: DispatchStores, key: { webhookId: string }): Promise<Webhook | undefined> {
  return stores.webhooks.find(key.webhookId);
}

function timestampOf(event: LoggedEvent): number {
  const data = event.payload.data as { messageTimestamp?: unknown } | null;
  return typeof data?.messageTimestamp === 'number' ? data.messageTimestamp : 0;
}

/** Delivery history of a webhook (spec: `webhooks:read`), newest first, with every attempt. */
export async function listDeliveries(
  stores: DispatchStores,
  actor: Actor,
  webhookId: string,
  request: PageRequest,
): Promise<Page<Delivery & { attemptLog: DeliveryAttempt[] }>> {
  authorize(actor.roles, 'connections', 'read');
  if (!(await stores.webhooks.get(actor.workspaceId, webhookId))) throw notFound(`Webhook ${webhookId} not found`);
  return stores.deliveries.list(webhookId, request);
}

/** A failed delivery sent again by hand: a fresh round of three attempts. */
export async function redeliverDelivery(stores: DispatchStores, deps: DispatchDeps, actor: Actor, webhookId: string, deliveryId: string): Promise<Delivery> {
  authorize(actor.roles, 'connections', 'write');
  if (!(await stores.webhooks.get(actor.workspaceId, webhookId))) throw notFound(`Webhook ${webhookId} not found`);
  return redeliverFailed(stores, deps, webhookId, deliveryId);
}

/** A failed delivery of a webhook the caller may manage (checked by the caller) goes out again. */
export async function redeliverFailed(stores: Pick<DispatchStores, 'deliveries'>, deps: DispatchDeps, webhookId: string, deliveryId: string): Promise<Delivery> {
  const delivery = await stores.deliveries.lock(deliveryId);
  if (!delivery || delivery.webhookId !== webhookId) throw notFound(`Delivery ${deliveryId} not found`);
  if (delivery.state !== 'FAILED') throw new DomainError('conflict', `Only a failed delivery can be redelivered; this one is ${delivery.state}`);
  const now = deps.clock.now();
  const fresh: Delivery = { ...delivery, ...redeliver(delivery), nextAttemptAt: now, updatedAt: now };
  await stores.deliveries.update(fresh);
  return fresh;
}
