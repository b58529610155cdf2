import type { DatabaseHandle, PluginContext } from '../../kernel/context.ts';
import { messagingDeps, messagingStores } from '../../kernel/storage.ts';
import { sendHelpdeskMessage, systemActor } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import type { Conversation } from '../../../core/helpdesk/conversations/conversations.ts';
import { helpdeskMessageStores } from './store.ts';

/**
 * A text sent to the contact by the helpdesk itself (`systemActor`: the CSAT survey link, the
 * out-of-office reply) through the normal reply path, on the given handle; a refusal of that
 * path is a DomainError, as for a person's reply.
 */
export function systemReply(db: DatabaseHandle, ctx: PluginContext) {
  return (conversation: Conversation, text: string) =>
    sendHelpdeskMessage(
      helpdeskMessageStores(db, ctx),
      { stores: messagingStores(db, ctx), deps: messagingDeps(ctx) },
      { clock: ctx.clock, ids: ctx.ids },
      systemActor(conversation.workspaceId),
      conversation.id,
      { content: text },
    );
}
