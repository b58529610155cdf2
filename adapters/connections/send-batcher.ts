import type { Actor } from '../../core/identity/identity.ts';
import type { ChatMessage } from '../../core/messaging/message.ts';
import { acceptSend, acceptSendBatch, BatchNotCovered, type SendRequest } from '../../core/messaging/send.ts';
import { onePerContext, type AppContext } from '../http/context.ts';
import { messagingDeps, messagingStores } from './stores.ts';
import { errorField } from '../logging/logger.ts';

/** Sends accepted together at most (one transaction). */
const MAX_BATCH = 64;
/**
 * Batches of one connection being written at once; what arrives meanwhile waits for the next.
 * One: the batches of a connection all debit one credit account (a row lock), so a second
 * batch in flight mostly waited on the first, and smaller batches cost more (bench:send).
 */
const IN_FLIGHT_PER_CONNECTION = 1;

type Accepted = { message: ChatMessage; created: boolean };

interface Waiting {
  actor: Actor;
  request: SendRequest;
  resolve(result: Accepted): void;
  reject(error: unknown): void;
}

/**
 * Group commit for API sends: sends to one connection that arrive while earlier ones are being
 * written are accepted together (core `acceptSendBatch`: one transaction, one credit debit,
 * multi-row writes), so under load the database does a fraction of the work per send, and a
 * lone send is written at once, as before. Each request still gets its own answer: its own
 * message, or its own error. If the batch cannot be written as one (the credits do not cover it
 * in one write, or a write fails) every send of it is accepted on its own, as if never batched.
 */
export const sendBatcher = onePerContext(createBatcher);

function createBatcher(ctx: AppContext) {
  const deps = messagingDeps(ctx);
  const waiting = new Map<string, Waiting[]>();
  const inFlight = new Map<string, number>();

  function accept(actor: Actor, connectionId: string, request: SendRequest): Promise<Accepted> {
    return new Promise((resolve, reject) => {
      const key = `${actor.workspaceId}|${connectionId}`;
      const queue = waiting.get(key) ?? [];
      queue.push({ actor, request, resolve, reject });
      waiting.set(key, queue);
      // Sends whose requests were read in the same turn of the event loop go together.
      if (queue.length === 1) setImmediate(() => next(key, actor.workspaceId, connectionId));
    });
  }

  function next(key: string, workspaceId: string, connectionId: string): void {
    const queue = waiting.get(key);
    if (!queue?.length || (inFlight.get(key) ?? 0) >= IN_FLIGHT_PER_CONNECTION) return;
    const batch = queue.splice(0, MAX_BATCH);
    if (queue.length === 0) waiting.delete(key);
    inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    write(workspaceId, connectionId, batch).finally(() => {
      const left = inFlight.get(key)! - 1;
      if (left > 0) inFlight.set(key, left);
      else inFlight.delete(key);
      next(key, workspaceId, connectionId);
    });
  }

  async function write(workspaceId: string, connectionId: string, batch: Waiting[]): Promise<void> {
    // A lone send takes the batch's path too (its few writes are the batch's, compiled once).
    try {
      const results = await ctx.db.transaction().execute((trx) => acceptSendBatch(messagingStores(trx, ctx), deps, workspaceId, connectionId, batch));
      results.forEach((result, i) => ('message' in result ? batch[i]!.resolve({ message: result.message, created: true }) : batch[i]!.reject(result.error)));
      return;
    } catch (error) {
      // Rolled back as a whole: each send is accepted on its own below, so the credits refuse
      // exactly those they do not cover (and open or renew the month's account) and a failing
      // write fails only its own send.
      if (!(error instanceof BatchNotCovered)) ctx.log.warn({ sends: batch.length, error: errorField(error) }, 'a batch of sends failed; accepting them one by one');
    }
    await Promise.all(
      batch.map((send) =>
        ctx.db
          .transaction()
          .execute((trx) => acceptSend(messagingStores(trx, ctx), deps, send.actor, connectionId, send.request))
          .then(send.resolve, send.reject),
      ),
    );
  }

  return { accept };
}
