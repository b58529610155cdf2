import type { Actor } from '../../core/identity/identity.ts';
import { acceptSend } from '../../core/messaging/send.ts';
import { assertOutboundMedia, normalizeRecipient, parseOutgoingContent } from '../../core/messaging/outgoing.ts';
import { badRequest, collectProblems } from '../../core/shared/errors.ts';
import type { AppContext } from '../http/context.ts';
import { messagingDeps, messagingStores } from './stores.ts';
import { sendBatcher } from './send-batcher.ts';
import { countAcceptedSend } from '../metrics/accepted-sends.ts';

/**
 * A send as an API request carries it (`to`, one content field, `replyTo`), for every version
 * of the API: the message is accepted in one transaction (credit, outbox, message), shared with
 * the sends that arrive alongside it. Every check, the template's status included, is core's
 * (`acceptSend`).
 */
export async function sendFromRequest(ctx: AppContext, actor: Actor, connectionId: string, body: Record<string, unknown>, idempotencyKey: string | undefined) {
  // The recipient and the content are checked together: every broken rule in one 400.
  const problems: string[] = [];
  collectProblems(problems, () => normalizeRecipient(body.to));
  const content = collectProblems(problems, () => parseOutgoingContent(body));
  if (problems.length > 0 || !content) throw badRequest(problems);
  const request = { to: body.to, content, replyTo: body.replyTo as string | undefined, idempotencyKey };
  await assertOutboundMedia(ctx.outbound, 'body', request.content);
  // A retried request's key is looked up under the workspace lock, one at a time; others are
  // accepted together with the sends that arrive alongside them (send-batcher.ts).
  const accepted = idempotencyKey
    ? await ctx.db.transaction().execute((trx) => acceptSend(messagingStores(trx, ctx), messagingDeps(ctx), actor, connectionId, request))
    : await sendBatcher(ctx).accept(actor, connectionId, request);
  await countAcceptedSend(ctx)(accepted.message, accepted.created);
  return accepted;
}
