import type { Actor } from '../../core/identity/identity.ts';
import type { ChatMessage } from '../../core/messaging/message.ts';
import { acceptSend, acceptSendBatch, BatchNotCovered, type SendRequest } from '../../core/messaging/send.ts';
import { onePerContext, type AppContext } from '../http/context.ts';
import { messagingDeps, messagingStores } from './stores.ts';
import { overlappingTurns } from './overlapping-turns.ts';
import { errorField } from '../logging/logger.ts';

/** Sends accepted together at most (one transaction). */
const MAX_BATCH = 64;

type Accepted = { message: ChatMessage; created: boolean };

interface Waiting {
  actor: Actor;
  connectionId: string;
  request: SendRequest;
  resolve(result: Accepted): void;
  reject(error: unknown): void;
}

/**
 * Group commit for API sends: sends to one connection that arrive while earlier ones are being
 * written are accepted together (core `acceptSendBatch`: one transaction, one credit debit,
 * multi-row writes), so under load the database does a fraction of the work per send, and a
 * lone send is written at once. A connection's batches are written one after another
 * (they all debit one credit account, a row lock: overlapping writes would only wait on it), in
 * overlapping turns (overlapping-turns.ts): the next batch's transaction opens and reads the
 * connection while the one before writes, and writes while that one commits (its debit waits for
 * that commit). Each request still gets its own answer: its own
 * message, or its own error. If the batch cannot be written as one (the credits do not cover it
 * in one write, or a write fails) every send of it is accepted on its own, as if never batched.
 */
export const sendBatcher = onePerContext(createBatcher);

function createBatcher(ctx: AppContext) {
  const deps = messagingDeps(ctx);
  const turns = overlappingTurns(ctx.db, {
    maxBatch: MAX_BATCH,
    async open(trx, first: Waiting) {
      const stores = messagingStores(trx, ctx);
      return { stores, connection: await stores.connections.get(first.actor.workspaceId, first.connectionId) };
    },
    async write(_trx, { stores, connection }, batch) {
      // A lone send takes the batch's path too (its few writes are the batch's, compiled once).
      const first = batch[0]!;
      const results = await acceptSendBatch(stores, deps, first.actor.workspaceId, first.connectionId, connection, batch);
      return () => results.forEach((result, i) => ('message' in result ? batch[i]!.resolve({ message: result.message, created: true }) : batch[i]!.reject(result.error)));
    },
    async fallback(batch, error) {
      // Rolled back as a whole: each send is accepted on its own, so the credits refuse exactly
      // those they do not cover (and open or renew the month's account) and a failing write
      // fails only its own send.
      if (!(error instanceof BatchNotCovered)) ctx.log.warn({ sends: batch.length, error: errorField(error) }, 'a batch of sends failed; accepting them one by one');
      await Promise.all(
        batch.map((send) =>
          ctx.db
            .transaction()
            .execute((trx) => acceptSend(messagingStores(trx, ctx), deps, send.actor, send.connectionId, send.request))
            .then(send.resolve, send.reject),
        ),
      );
    },
    lost: (error, key) => ctx.log.error({ key, error: errorField(error) }, 'sends could not be answered'),
  });

  function accept(actor: Actor, connectionId: string, request: SendRequest): Promise<Accepted> {
    return new Promise((resolve, reject) => turns.add(`${actor.workspaceId}|${connectionId}`, { actor, connectionId, request, resolve, reject }));
  }

  return { accept };
}
