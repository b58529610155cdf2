import type { Actor } from '../../identity/identity.ts';
import { badRequest } from '../../shared/errors.ts';
import { getConversation, type ConversationStores } from '../conversations/conversations.ts';
import { assertHelpdeskConfigurable } from '../plan-gate.ts';
import type { ConversationTiming, SlaPolicy } from './sla.ts';
import { trackConversation, type SlaBreach, type SlaDeps, type SlaTrackingStores } from './tracking.ts';

/**
 * The SLA of one conversation (`GET`/`PATCH /v3/helpdesk/conversations/{id}/sla`): its policy,
 * running due times, timing and breaches. A route of its own rather than fields of the
 * conversation: the conversation's shape is also every event's, and SLA status changes with
 * the clock, not with the conversation. Readable by whoever sees the conversation; putting
 * another policy on it (or none) is configuring the helpdesk (Owner, Admin, Manager; PRO plan).
 */

export interface ConversationSlaStores {
  /** The conversation use cases' ports (visibility of the conversation, the plan). */
  conversations: ConversationStores;
  timing: { get(conversationId: string): Promise<ConversationTiming | undefined> };
  breaches: { list(conversationId: string): Promise<SlaBreach[]> };
  policies: { get(workspaceId: string, id: string): Promise<SlaPolicy | undefined> };
}

export interface ConversationSla {
  conversationId: string;
  policy: SlaPolicy | null;
  /** Null while the helpdesk has not tracked the conversation yet (it does on its next event). */
  timing: ConversationTiming | null;
  breaches: SlaBreach[];
}

export async function getConversationSla(stores: ConversationSlaStores, actor: Actor, id: string): Promise<ConversationSla> {
  const conversation = await getConversation(stores.conversations, actor, id);
  return slaOf(stores, conversation.workspaceId, conversation.id);
}

async function slaOf(stores: ConversationSlaStores, workspaceId: string, conversationId: string): Promise<ConversationSla> {
  const timing = (await stores.timing.get(conversationId)) ?? null;
  const policy = timing?.policyId ? ((await stores.policies.get(workspaceId, timing.policyId)) ?? null) : null;
  return { conversationId, policy, timing, breaches: await stores.breaches.list(conversationId) };
}

/**
 * Puts a policy of the workspace on the conversation (null: none), applied now: its rounds start
 * from now (a wait that began earlier is measured from now), running rounds of the previous
 * policy stop. The same policy again changes nothing.
 */
export async function applyConversationSla(
  stores: ConversationSlaStores & { tracking: SlaTrackingStores },
  deps: SlaDeps,
  actor: Actor,
  id: string,
  policyId: string | null,
): Promise<ConversationSla> {
  const conversation = await getConversation(stores.conversations, actor, id);
  await assertHelpdeskConfigurable(stores.conversations.plans, actor);
  if (policyId !== null && !(await stores.policies.get(actor.workspaceId, policyId))) throw badRequest(['body.policyId must be an SLA policy of this workspace, or null']);
  await trackConversation(stores.tracking, deps, conversation.workspaceId, conversation.id, { policyId });
  return slaOf(stores, conversation.workspaceId, conversation.id);
}
