import { hostname } from 'node:os';
import { createSender } from '../../core/messaging/deliver.ts';
import type { ClaimedSend } from '../../core/messaging/send-queue.ts';
import { IN_DOUBT_GRACE_SECONDS, SEND_LEASE_RENEWAL_SECONDS, SEND_LEASE_SECONDS } from '../../core/messaging/send-record.ts';
import type { AppContext } from '../http/context.ts';
import type { DatabaseHandle } from '../postgres/database.ts';
import { sendQueue } from '../postgres/repositories/send-queue.ts';
import { wakeOnNotify } from '../queue/notify-wake.ts';
import { PollingLoop, type StepResult } from '../queue/polling-loop.ts';
import { messagingDeps, messagingUnitOfWork } from './stores.ts';
import { errorField } from '../logging/logger.ts';

/** Sends claimed per statement. */
const CLAIM_BATCH = 100;
/** Sends this worker holds at once (claimed or on the wire). */
const MAX_HELD = 400;
/** How long a stopping worker lets its sends on the wire finish before it lets go. */
const STOP_WAIT_MS = 10_000;

export interface SendEngine {
  /** Its loop runs (readiness). */
  running(): boolean;
  /** Stops claiming, lets the sends on the wire finish (up to 10 s) and gives back the rest. */
  stop(): Promise<void>;
}

/**
 * The worker's send engine: the message rows are the queue (core/messaging/send-record.ts). A
 * claim loop takes due sends in batches under a lease (woken by the NOTIFY of every accepted
 * send, polling otherwise), each batch is sent while the next is claimed, leases are renewed
 * every few seconds, and sends of a worker that died are taken over once its lease lapses
 * (12 s): those never on the wire are sent, those on the wire wait in doubt for the network's
 * evidence (20 s) and are otherwise given up. Run it in every worker process.
 */
export function startSendEngine(ctx: AppContext, database: DatabaseHandle): SendEngine {
  const owner = `${hostname()}:${process.pid}:${crypto.randomUUID()}`;
  const queue = sendQueue(ctx.db);
  const deps = messagingDeps(ctx);
  const sender = createSender(messagingUnitOfWork(ctx), deps, { owner, queue, stopping: () => stopping });
  const held = new Map<string, ClaimedSend>();
  const running = new Set<Promise<void>>();
  let stopping = false;

  const loop = new PollingLoop('sends', claimStep, 20, 500).start();
  const stopWaking = wakeOnNotify(database, 'message_sends', () => loop.wake());
  const renewal = setInterval(() => void renewLeases(), SEND_LEASE_RENEWAL_SECONDS * 1000);

  async function claimStep(): Promise<StepResult> {
    const room = Math.min(CLAIM_BATCH, MAX_HELD - held.size);
    if (room <= 0 || stopping) return 'none';
    const now = deps.clock.now();
    const { claimed, givenUp } = await queue.claimDue(owner, now, after(now, SEND_LEASE_SECONDS), after(now, IN_DOUBT_GRACE_SECONDS), room);
    if (givenUp.length > 0) await sender.giveUp(givenUp);
    if (claimed.length === 0) return givenUp.length > 0 ? 'some' : 'none';
    for (const send of claimed) held.set(send.message.id, send);
    const batch = sender
      .deliver(claimed)
      .then((errors) => {
        for (const error of errors) ctx.log.error({ loop: 'sends', error: errorField(error) }, 'recording a send failed; its lease will lapse');
      })
      .finally(() => {
        // A stopping sender leaves the sends it did not start claimed: they stay held, for stop()
        // to give back (the release moves only sends still claimed, never one sent).
        if (!stopping) for (const send of claimed) held.delete(send.message.id);
        running.delete(batch);
        loop.wake();
      });
    running.add(batch);
    return claimed.length >= room ? 'full' : 'some';
  }

  /** Keeps this worker's sends; one it lost (it stalled past its lease) is not marked in flight any more. */
  async function renewLeases(): Promise<void> {
    if (held.size === 0) return;
    try {
      const ids = [...held.keys()];
      const kept = await queue.renew(owner, ids, after(deps.clock.now(), SEND_LEASE_SECONDS));
      for (const id of ids) if (!kept.has(id)) held.delete(id);
    } catch (error) {
      ctx.log.error({ loop: 'sends', error: errorField(error) }, 'renewing leases failed');
    }
  }

  return {
    running: () => !stopping && loop.isRunning,
    async stop() {
      stopping = true;
      await loop.stop();
      await stopWaking();
      const settled = Promise.all(running);
      await Promise.race([settled, Bun.sleep(STOP_WAIT_MS)]);
      clearInterval(renewal);
      // Sends still only claimed go back at once (nothing waits for a lease to lapse); any still
      // on the wire keep their lease until it lapses and are then settled as in doubt.
      await queue.release(owner, [...held.keys()], deps.clock.now()).catch((error: Error) => ctx.log.error({ loop: 'sends', error: errorField(error) }, 'releasing claims failed'));
    },
  };
}

function after(now: Date, seconds: number): Date {
  return new Date(now.getTime() + seconds * 1000);
}
