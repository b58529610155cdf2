import { fanOutPending, FANOUT_QUEUE, type DeliveryEndpoint } from '../../core/webhooks/dispatch.ts';
import {
  attemptClaimed,
  claimDue,
  LEASE_RENEWAL_SECONDS,
  LEASE_SECONDS,
  maySend,
  recordAttempts,
  type AttemptRecord,
  type ClaimedDelivery,
  type EngineDeps,
} from '../../core/webhooks/delivery-engine.ts';
import { REQUEST_TIMEOUT_MS } from '../../core/webhooks/delivery.ts';
import { messagingUnitOfWork } from '../connections/stores.ts';
import type { AppContext } from '../http/context.ts';
import { deliveryClaims } from '../postgres/repositories/delivery-claims.ts';
import { deliveryEndpoints } from './endpoints.ts';
import { webhookSender } from './http-sender.ts';
import { dispatchDeps, simulateTyping } from './jobs.ts';
import { PollingLoop, type StepResult } from '../queue/polling-loop.ts';
import { errorField } from '../logging/logger.ts';

/** Events fanned out per transaction. */
const FANOUT_BATCH = 200;
/** Deliveries claimed per statement. */
const CLAIM_BATCH = 256;
/** Requests in flight to one webhook from this worker: a hanging endpoint holds no more than these. */
const IN_FLIGHT_PER_WEBHOOK = 32;
/**
 * Claims this worker holds for one webhook before it leaves that webhook's backlog to others
 * (claims skip it); it claims for it again once half of them are settled. Claiming while a
 * webhook is skipped reads past its due backlog, so the engine does not claim on every settle.
 */
const HELD_PER_WEBHOOK = 256;
/** Claims this worker holds in all. */
const MAX_HELD = 4096;
/** How long finished attempts gather before they are recorded together. */
const RECORD_GATHER_MS = 10;

export interface DeliveryEngine {
  /** Both loops run (readiness). */
  running(): boolean;
  stop(): Promise<void>;
}

/**
 * The worker's delivery engine: a fan-out loop turning waiting events into deliveries, a claim
 * loop taking due deliveries in batches, requests sent side by side (at most
 * IN_FLIGHT_PER_WEBHOOK per webhook, so one slow or dead endpoint never delays the others), and
 * their attempts recorded in batches. Run it in every worker process; workers share the work
 * through the database.
 */
export function startDeliveryEngine(ctx: AppContext): DeliveryEngine {
  const uow = messagingUnitOfWork(ctx);
  const dispatch = dispatchDeps(ctx);
  const deps: EngineDeps = { clock: ctx.clock, wallClock: { now: () => new Date() }, ids: ctx.ids };
  const claims = deliveryClaims(ctx.db);
  const endpoints = deliveryEndpoints(ctx.db, ctx);
  const sender = webhookSender(ctx.outbound, ctx.metrics);

  const held = new Map<string, ClaimedDelivery>();
  const heldPerWebhook = new Map<string, number>();
  const waiting = new Map<string, { delivery: ClaimedDelivery; endpoint: DeliveryEndpoint }[]>();
  const inFlight = new Map<string, number>();
  const toRecord: AttemptRecord[] = [];
  const toRelease: ClaimedDelivery[] = [];
  let recording: Promise<void> | undefined;
  let stopped = false;

  // Events are gathered for 15 ms between fan-outs (a few milliseconds of latency for far fewer
  // transactions under load); the claim loop is woken by each fan-out that made deliveries.
  const fanOutLoop = new PollingLoop('webhooks fan-out', fanOutStep, 15, 250).start();
  const claimLoop = new PollingLoop('webhooks delivery', claimStep, 5, 250).start();
  const renewal = setInterval(() => void renewLeases(), LEASE_RENEWAL_SECONDS * 1000);

  async function fanOutStep(): Promise<StepResult> {
    // The deliveries it makes are born held by this worker, as far as it has room: sent at once,
    // with no claim statement for them and no wait for the claim loop.
    const claim = roomToClaim();
    const fanOutClaim = claim && { claimId: deps.ids.next(), claimedUntil: new Date(deps.wallClock.now().getTime() + LEASE_SECONDS * 1000), limit: claim.room, skipWebhooks: new Set(claim.skip) };
    let result: Awaited<ReturnType<typeof fanOutPending>>;
    try {
      result = await uow.transaction((stores) => fanOutPending(stores, dispatch, FANOUT_BATCH, fanOutClaim));
    } catch (error) {
      // An event the batch cannot fan out must not hold the others back: each goes to a job of
      // its own, retried on its own (the fan-out job queue).
      ctx.log.error({ error: errorField(error) }, 'webhook fan-out batch failed, queueing its events one by one');
      await uow.transaction(async (stores) => {
        const events = await stores.fanouts.take(FANOUT_BATCH);
        await stores.outbox.enqueueMany(FANOUT_QUEUE, events.map((e) => ({ data: { eventId: e.id }, dedupeKey: e.id })));
      });
      return 'some';
    }
    if (result.claimed.length > 0) await take(result.claimed);
    if (result.deliveries > result.claimed.length) claimLoop.wake();
    for (const batch of result.typingStarted) await simulateTyping(ctx, batch, true);
    return result.taken >= FANOUT_BATCH ? 'full' : result.taken > 0 ? 'some' : 'none';
  }

  async function claimStep(): Promise<StepResult> {
    const claim = roomToClaim();
    if (!claim) return 'none';
    const claimed = await claimDue(claims, deps, claim.room, claim.skip);
    if (claimed.length === 0) return 'none';
    await take(claimed);
    return claimed.length >= claim.room ? 'full' : 'some';
  }

  /**
   * How many more deliveries this worker may hold, and the webhooks it holds enough of; none when
   * full. The fan-out and the claim loop each ask while the other's claim may be in flight, so
   * together they may hold one batch (`CLAIM_BATCH`) past `MAX_HELD`: a bound on memory, not a
   * promise, and the next asks find no room until the held deliveries drain.
   */
  function roomToClaim(): { room: number; skip: string[] } | undefined {
    const room = Math.min(CLAIM_BATCH, MAX_HELD - held.size);
    if (room <= 0) return undefined;
    return { room, skip: [...heldPerWebhook].filter(([, n]) => n >= HELD_PER_WEBHOOK).map(([webhookId]) => webhookId) };
  }

  /** Holds claimed deliveries and starts their requests (a delivery whose webhook is gone is settled). */
  async function take(claimed: ClaimedDelivery[]): Promise<void> {
    const found = await endpoints.findAll(claimed);
    const gone = claimed.filter((d) => !found.get(d.id));
    // Its webhook was deleted (or its plugin disabled): nothing to send it to, ever.
    if (gone.length > 0) await claims.release(gone, 'settle', deps.clock.now());
    const touched = new Set<string>();
    for (const delivery of claimed) {
      const endpoint = found.get(delivery.id);
      if (!endpoint) continue;
      held.set(delivery.id, delivery);
      heldPerWebhook.set(delivery.webhookId, (heldPerWebhook.get(delivery.webhookId) ?? 0) + 1);
      const queue = waiting.get(delivery.webhookId) ?? [];
      queue.push({ delivery, endpoint });
      waiting.set(delivery.webhookId, queue);
      touched.add(delivery.webhookId);
    }
    for (const webhookId of touched) sendWaiting(webhookId);
  }

  /** Starts the webhook's waiting requests while it has room in flight. */
  function sendWaiting(webhookId: string): void {
    if (stopped) return; // what waits is let go by stop()
    const queue = waiting.get(webhookId);
    while (queue?.length && (inFlight.get(webhookId) ?? 0) < IN_FLIGHT_PER_WEBHOOK) {
      const { delivery, endpoint } = queue.shift()!;
      if (!held.has(delivery.id)) continue; // its claim lapsed meanwhile
      if (!maySend(delivery, deps.wallClock.now())) {
        settleLocally(delivery);
        toRelease.push(delivery);
        continue;
      }
      inFlight.set(webhookId, (inFlight.get(webhookId) ?? 0) + 1);
      attemptClaimed(sender, deps, delivery, endpoint)
        .then((record) => void toRecord.push(record))
        .catch((error: Error) => {
          ctx.log.error({ deliveryId: delivery.id, error: errorField(error) }, 'webhook delivery failed');
          toRelease.push(delivery);
        })
        .finally(() => {
          inFlight.set(webhookId, inFlight.get(webhookId)! - 1);
          sendWaiting(webhookId);
          void record();
        });
    }
    if (queue && queue.length === 0) waiting.delete(webhookId);
  }

  /** Records finished attempts in batches: while one batch is written, the next gathers. */
  function record(): Promise<void> {
    recording ??= drainFinished().finally(() => {
      recording = undefined;
    });
    return recording;
  }

  async function drainFinished(): Promise<void> {
    let failures = 0;
    while (toRecord.length > 0 || toRelease.length > 0) {
      // Requests finish one by one; gathering them a moment makes one write of many under load,
      // where the first finished request used to be written alone.
      if (!stopped) await Bun.sleep(RECORD_GATHER_MS);
      const attempts = toRecord.splice(0);
      const released = toRelease.splice(0);
      try {
        await recordAttempts(claims, deps, attempts);
        if (released.length > 0) await claims.release(released, 'due', deps.clock.now());
      } catch (error) {
        ctx.log.error({ attempts: attempts.length, error: errorField(error) }, 'recording webhook attempts failed');
        // Still claimed by this worker, so a later try may write them (the claim guards the
        // write). Past the lease another worker may have taken them over, and a stopped engine
        // does not linger: give up then (the claims lapse and the deliveries go out again).
        if (!stopped && ++failures < LEASE_SECONDS) {
          toRecord.push(...attempts);
          toRelease.push(...released);
          await Bun.sleep(1_000);
          continue;
        }
      }
      let roomMade = false;
      for (const attempt of attempts) roomMade = settleLocally(attempt.delivery) || roomMade;
      for (const delivery of released) roomMade = settleLocally(delivery) || roomMade;
      if (roomMade) claimLoop.wake();
    }
  }

  /**
   * Forgets a claim; true when that makes room worth a claim: its webhook fell to half its share,
   * or the worker to half of all it may hold. Not on every settle: live deliveries are born held
   * by the fan-out, and a claim after each recorded batch found nothing (on the embedded
   * database, such claims took more of its one connection than storing the messages).
   */
  function settleLocally(delivery: ClaimedDelivery): boolean {
    if (!held.delete(delivery.id)) return false;
    const left = heldPerWebhook.get(delivery.webhookId)! - 1;
    if (left > 0) heldPerWebhook.set(delivery.webhookId, left);
    else heldPerWebhook.delete(delivery.webhookId);
    return left === HELD_PER_WEBHOOK / 2 || held.size === MAX_HELD / 2;
  }

  /** Keeps this worker's claims; one it lost (it stalled past its lease) is no longer sent. */
  async function renewLeases(): Promise<void> {
    if (held.size === 0) return;
    const claimedUntil = new Date(deps.wallClock.now().getTime() + LEASE_SECONDS * 1000);
    try {
      const mine = [...held.values()];
      const renewed = await claims.renew(mine, claimedUntil);
      for (const delivery of mine) {
        if (renewed.has(delivery.id)) delivery.claimedUntil = claimedUntil;
        else settleLocally(delivery);
      }
    } catch (error) {
      ctx.log.error({ error: errorField(error) }, 'renewing webhook delivery claims failed');
    }
  }

  return {
    running: () => !stopped && fanOutLoop.isRunning && claimLoop.isRunning,
    async stop() {
      stopped = true;
      clearInterval(renewal);
      await Promise.all([fanOutLoop.stop(), claimLoop.stop()]);
      // Deliveries not started go back at once; requests in flight finish and are recorded (each
      // is bounded by its timeout), so nothing is left to a lapsing lease.
      for (const queue of waiting.values()) for (const { delivery } of queue) toRelease.push(delivery);
      waiting.clear();
      void record().catch(() => {});
      const deadline = Date.now() + REQUEST_TIMEOUT_MS + 1_000;
      while ([...inFlight.values()].some((n) => n > 0) && Date.now() < deadline) await Bun.sleep(20);
      await record().catch(() => {});
    },
  };
}
