import type { PluginEventPayload } from '../../kernel/events.ts';
import { assignOnArrival } from '../../../core/helpdesk/assignment/auto-assignment.ts';
import type { PluginContext } from '../../kernel/plugin.ts';
import { assignmentDeps, assignmentStores } from './store.ts';

/**
 * `helpdesk.conversation.created`, run by the worker after the conversation committed (after the
 * bots feature's subscriber, so a bot bound to the inbox takes the conversation first and this
 * finds it held). Idempotent: the arrival is decided once (core/helpdesk/assignment/auto-assignment.ts).
 */
export async function onConversationCreated(payload: unknown, ctx: PluginContext): Promise<void> {
  const event = payload as PluginEventPayload;
  const conversationId = (event.data as { conversationId?: unknown } | undefined)?.conversationId;
  if (typeof conversationId !== 'string') return;
  await ctx.storage.transaction(assignmentStores, (stores) => assignOnArrival(stores, assignmentDeps(ctx), conversationId));
}
