import type { Role } from '../../identity/roles.ts';
import type { Clock } from '../../shared/ports.ts';
import type { Conversation } from '../conversations/conversation.ts';
import { recordChanges, type ConversationStores } from '../conversations/conversations.ts';
import { seesEveryInbox } from '../inboxes/inboxes.ts';
import { shownStatus, type Presence } from './presence.ts';
import { chooseAssignee, type AssignmentRule, type Candidate, type RotationState } from './round-robin.ts';

/**
 * Automatic assignment of a conversation to a person (spec 3.7), run when a conversation is
 * created (the assignment feature's subscriber) and when an agent bot hands one over to humans.
 * The rule itself is pure (round-robin.ts); this use case gathers its inputs in the caller's
 * transaction, applies the choice through the conversation update path (so
 * `helpdesk.conversation.assignee_changed` is recorded with `actorUserId: null`: no person
 * acted) and keeps the pool's rotation in the same transaction.
 *
 * Pools: a conversation without a team draws from the inbox's members; one with a team from the
 * team's members who may see the inbox (inbox members, and Managers and above, who see every
 * inbox). Each pool (inbox, or inbox and team) has its own rotation, so a team's conversations
 * never move the inbox's turn.
 */

/** A member of a pool as the store finds them: still a member of the workspace. */
export interface PoolMember {
  userId: string;
  roles: Role[];
  /** Member of the conversation's inbox. */
  inboxMember: boolean;
  /** Undefined when the member never connected (shown offline). */
  presence: Presence | undefined;
}

/** What was decided for a conversation (the latest decision is kept, one per conversation). */
export type AssignmentOutcome = AssignmentRule | 'disabled' | 'already-assigned' | 'resolved';

export interface AssignmentDecision {
  conversationId: string;
  workspaceId: string;
  inboxId: string;
  teamId: string | null;
  /** `arrival`: a new conversation; `handoff`: handed over to humans later (a bot letting go). */
  trigger: 'arrival' | 'handoff';
  outcome: AssignmentOutcome;
  assigneeUserId: string | null;
  decidedAt: Date;
}

export interface AutoAssignmentStore {
  /** The conversation, its row locked until the transaction ends (no other change interleaves). */
  lockConversation(conversationId: string): Promise<Conversation | undefined>;
  /**
   * The inbox's switch (enabled when never set), its row created if need be and locked until the
   * transaction ends: assignments in one inbox take turns here, so two conversations arriving at
   * once never read the same rotation.
   */
  lockInbox(workspaceId: string, inboxId: string): Promise<{ enabled: boolean }>;
  /** Without a team: the inbox's members; with one: the team's members. Current workspace members only. */
  pool(workspaceId: string, inboxId: string, teamId: string | null): Promise<PoolMember[]>;
  /** The workspace Owner (the earliest, should there be several). */
  owner(workspaceId: string): Promise<string | undefined>;
  rotation(inboxId: string, teamId: string | null): Promise<RotationState>;
  saveRotation(workspaceId: string, inboxId: string, teamId: string | null, rotation: RotationState, at: Date): Promise<void>;
  /** Keeps the decision (replacing an earlier one of the conversation). */
  recordDecision(decision: AssignmentDecision): Promise<void>;
  /** Whether a decision was already taken on the conversation's arrival (a replayed event). */
  decidedOnArrival(conversationId: string): Promise<boolean>;
}

export interface AutoAssignStores extends ConversationStores {
  assignment: AutoAssignmentStore;
}

export interface AutoAssignDeps {
  clock: Clock;
  /** How long a member stays shown online without a heartbeat (core/helpdesk/assignment/presence.ts). */
  presenceTtlMs: number;
}

export interface AutoAssignResult {
  outcome: AssignmentOutcome | 'missing';
  assigneeUserId: string | null;
  /** The conversation after the decision; undefined when it no longer exists. */
  conversation?: Conversation;
}

/**
 * Assigns the conversation to a person if it has nobody: not when it is held by a person or a bot
 * already (`already-assigned`), is RESOLVED, or the inbox's automatic assignment is switched off.
 * Run in a transaction; the bots feature calls it when a bot hands the conversation to humans
 * (after clearing `assigneeAgentBotId` in the same transaction).
 */
export async function autoAssign(stores: AutoAssignStores, deps: AutoAssignDeps, conversationId: string, trigger: AssignmentDecision['trigger'] = 'handoff'): Promise<AutoAssignResult> {
  const conversation = await stores.assignment.lockConversation(conversationId);
  if (!conversation) return { outcome: 'missing', assigneeUserId: null };
  const now = deps.clock.now();
  const decide = async (outcome: AssignmentOutcome, assigneeUserId: string | null, after: Conversation): Promise<AutoAssignResult> => {
    await stores.assignment.recordDecision({
      conversationId: after.id,
      workspaceId: after.workspaceId,
      inboxId: after.inboxId,
      teamId: after.teamId,
      trigger,
      outcome,
      assigneeUserId,
      decidedAt: now,
    });
    return { outcome, assigneeUserId, conversation: after };
  };
  if (conversation.assigneeUserId !== null || conversation.assigneeAgentBotId !== null) return decide('already-assigned', conversation.assigneeUserId, conversation);
  if (conversation.status === 'RESOLVED') return decide('resolved', null, conversation);
  const { enabled } = await stores.assignment.lockInbox(conversation.workspaceId, conversation.inboxId);
  if (!enabled) return decide('disabled', null, conversation);

  const eligible = await eligibleCandidates(stores, deps, conversation, now);
  const teamRestricted = conversation.teamId !== null;
  const ownerUserId = eligible.length === 0 && !teamRestricted ? ((await stores.assignment.owner(conversation.workspaceId)) ?? null) : null;
  const rotation = await stores.assignment.rotation(conversation.inboxId, conversation.teamId);
  const choice = chooseAssignee({ eligible, teamRestricted, ownerUserId, rotation });
  if (choice.rotation.lastUserId !== rotation.lastUserId) {
    await stores.assignment.saveRotation(conversation.workspaceId, conversation.inboxId, conversation.teamId, choice.rotation, now);
  }
  if (choice.userId === null) return decide(choice.rule, null, conversation);

  // A new assignee has seen nothing yet (as in updateConversation).
  const assigned: Conversation = { ...conversation, assigneeUserId: choice.userId, assigneeLastSeenAt: null, updatedAt: now };
  await stores.conversations.update(assigned);
  await recordChanges(stores, conversation, assigned, null);
  return decide(choice.rule, choice.userId, assigned);
}

/**
 * A new conversation (`helpdesk.conversation.created`): decided once. A replayed event (the job
 * may run again) finds the decision taken and changes nothing, even if a person has unassigned
 * the conversation in between.
 */
export async function assignOnArrival(stores: AutoAssignStores, deps: AutoAssignDeps, conversationId: string): Promise<AutoAssignResult | null> {
  if (await stores.assignment.decidedOnArrival(conversationId)) return null;
  return autoAssign(stores, deps, conversationId, 'arrival');
}

/** The pool's members who may take the conversation, with the status the workspace sees for them. */
async function eligibleCandidates(stores: AutoAssignStores, deps: AutoAssignDeps, conversation: Conversation, now: Date): Promise<Candidate[]> {
  const members = await stores.assignment.pool(conversation.workspaceId, conversation.inboxId, conversation.teamId);
  const mayTake = (m: PoolMember) => conversation.teamId === null || m.inboxMember || seesEveryInbox({ userId: m.userId, workspaceId: conversation.workspaceId, roles: m.roles });
  return members.filter(mayTake).map((m) => ({ userId: m.userId, status: shownStatus(m.presence, now, deps.presenceTtlMs) }));
}
