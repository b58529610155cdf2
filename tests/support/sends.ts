import type { AppContext } from '../../adapters/http/context.ts';
import { messagingDeps, messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { toMessage } from '../../adapters/postgres/repositories/message-store.ts';
import { sendQueue } from '../../adapters/postgres/repositories/send-queue.ts';
import { createSender } from '../../core/messaging/deliver.ts';
import type { SendDeps } from '../../core/messaging/send.ts';
import type { ClaimedSend } from '../../core/messaging/send-queue.ts';
import { SEND_LEASE_SECONDS } from '../../core/messaging/send-record.ts';

/**
 * A worker's turn on chosen sends, run by the test: these queued messages are claimed for a
 * test worker (whatever their due time: the test decides when) and handed to the real sender,
 * exactly as the send engine hands a claimed batch. `attempts` sets how often each was tried
 * before. Answers the sender's write errors. Only the named messages are touched, so tests
 * sharing a database never take each other's sends.
 */
export async function deliverNow(ctx: AppContext, sends: ReadonlyArray<string | { id: string; attempts: number }>, deps: SendDeps = messagingDeps(ctx)): Promise<Error[]> {
  const owner = `test-worker-${crypto.randomUUID()}`;
  const claimed = await claimNow(ctx, owner, sends, deps);
  return createSender(messagingUnitOfWork(ctx), deps, { owner, queue: sendQueue(ctx.db) }).deliver(claimed);
}

/** Claims these queued messages for `owner` (whatever their due time), as the send engine's claim would. */
export async function claimNow(ctx: AppContext, owner: string, sends: ReadonlyArray<string | { id: string; attempts: number }>, deps: SendDeps = messagingDeps(ctx)): Promise<ClaimedSend[]> {
  const wanted = sends.map((s) => (typeof s === 'string' ? { id: s, attempts: 0 } : s));
  const claimed: ClaimedSend[] = [];
  for (const { id, attempts } of new Map(wanted.map((w) => [w.id, w])).values()) {
    const row = await ctx.db
      .updateTable('messages')
      .set({ send_state: 'claimed', send_owner: owner, send_due_at: new Date(deps.clock.now().getTime() + SEND_LEASE_SECONDS * 1000), send_attempts: attempts })
      .where('id', '=', id)
      .where('send_state', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
    if (row) claimed.push({ message: toMessage(row), attempts: row.send_attempts, hops: row.send_hops });
  }
  return claimed;
}

/** Where a message's send stands in the queue (null once it left it), with its retry counter. */
export async function sendRecord(ctx: AppContext, id: string) {
  return ctx.db.selectFrom('messages').select(['send_state', 'send_attempts', 'send_due_at', 'send_owner']).where('id', '=', id).executeTakeFirstOrThrow();
}
