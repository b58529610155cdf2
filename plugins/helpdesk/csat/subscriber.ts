import type { EventSubscriber, PluginContext } from '../../kernel/plugin.ts';
import type { PluginEventPayload } from '../../kernel/events.ts';
import { sendSurveyOnResolve } from '../../../core/helpdesk/csat/csat.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import { surveySendPorts } from './store.ts';

interface StatusChanged {
  accountId: string;
  conversationId: string;
  inboxId: string;
  toStatus: string;
}

/**
 * `helpdesk.conversation.status_changed` to RESOLVED: the survey link goes to the contact, once
 * per conversation, through the normal reply path on the inbox's channel, sent by the helpdesk
 * itself (`systemActor`). The claim and the reply share one transaction: a crash or a retried
 * job either finds the claim committed with its reply, or neither.
 *
 * A refusal of the reply path (the inbox lost its connection, the network's AI holds the chat,
 * an official connection's window closed, the workspace left the PRO plan or ran out of
 * credits) rolls the claim back too: the survey stays unsent, the refusal is logged, and the
 * job is not failed (a retry would be refused the same way). The next resolve tries again.
 */
export async function onConversationResolved(payload: unknown, ctx: PluginContext): Promise<void> {
  const data = (payload as PluginEventPayload).data as StatusChanged;
  if (data?.toStatus !== 'RESOLVED' || !data.conversationId || !data.inboxId) return;
  try {
    await ctx.storage.transaction(surveySendPorts, (ports) => sendSurveyOnResolve(ports, { clock: ctx.clock, publicUrl: ctx.config.publicUrl }, data));
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    ctx.log.warn({ conversationId: data.conversationId, error: { message: error.message } }, 'CSAT survey not sent');
  }
}

export const CSAT_SUBSCRIBERS: EventSubscriber[] = [{ event: 'helpdesk.conversation.status_changed', handle: onConversationResolved }];
