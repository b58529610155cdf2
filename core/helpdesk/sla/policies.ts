import { workspaceReads } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { badRequest, conflict, notFound } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import type { InboxStore } from '../inboxes/inboxes.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';
import { MAX_TARGET_MINUTES, type SlaPolicy } from './sla.ts';

/**
 * SLA policies (`/v3/helpdesk/sla-policies`): named targets (sla.ts) and the inboxes whose new
 * conversations get them. An inbox has at most one policy (listing it in a second is 409); a
 * conversation keeps the policy it got when it opened (a change of the inbox's policy applies
 * to new conversations) unless one is put on it (`PATCH /v3/helpdesk/conversations/{id}/sla`).
 * Editing a policy's targets applies to rounds that start afterwards; deleting it takes it off
 * its conversations (their running rounds stop; breaches stay recorded).
 *
 * Policies are helpdesk configuration (spec 2.14): Owners, Admins and Managers read and change
 * them (changes on the PRO plan); Agents see a conversation's SLA on the conversation.
 */

export const MAX_POLICY_NAME = 120;
export const MAX_POLICY_DESCRIPTION = 1000;
export const MAX_POLICY_INBOXES = 200;

export interface SlaPolicyStore {
  list(workspaceId: string, request: PageRequest): Promise<Page<SlaPolicy>>;
  get(workspaceId: string, id: string): Promise<SlaPolicy | undefined>;
  /** Another policy of the workspace with this name (case-insensitive). */
  nameTaken(workspaceId: string, name: string, exceptId?: string): Promise<boolean>;
  /** The inboxes among these that another policy holds. */
  inboxesHeldElsewhere(inboxIds: string[], exceptPolicyId?: string): Promise<string[]>;
  /** Inserts or replaces the policy with its inbox list. */
  save(policy: SlaPolicy, created: boolean): Promise<void>;
  /** Deletes it, taking it off its conversations and stopping their rounds. */
  delete(id: string): Promise<void>;
}

export interface SlaPolicyStores {
  policies: SlaPolicyStore;
  inboxes: Pick<InboxStore, 'get'>;
  plans: WorkspacePlans;
}

export interface SlaPolicyInput {
  name?: string;
  description?: string | null;
  firstResponseMinutes?: number | null;
  nextResponseMinutes?: number | null;
  resolutionMinutes?: number | null;
  onlyBusinessHours?: boolean;
  inboxIds?: string[];
}

const policyNotFound = () => notFound('SLA policy not found');

const policyReads = workspaceReads<SlaPolicy>('helpdesk.configure', policyNotFound);

export const listSlaPolicies = (stores: SlaPolicyStores, actor: Actor, request: PageRequest) => policyReads.list(stores.policies, actor, request);

export const getSlaPolicy = (stores: SlaPolicyStores, actor: Actor, id: string) => policyReads.get(stores.policies, actor, id);


export async function createSlaPolicy(stores: SlaPolicyStores, deps: { clock: Clock; ids: IdGen }, actor: Actor, input: SlaPolicyInput): Promise<SlaPolicy> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const now = deps.clock.now();
  const draft: SlaPolicy = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    name: '',
    description: null,
    firstResponseMinutes: null,
    nextResponseMinutes: null,
    resolutionMinutes: null,
    onlyBusinessHours: true,
    inboxIds: [],
    createdAt: now,
    updatedAt: now,
  };
  if (input.name === undefined) throw badRequest(['body.name is required']);
  const policy = await validated(stores, actor, draft, input);
  await stores.policies.save(policy, true);
  return policy;
}

/** Fields left out keep their value; `null` clears a target or the description; `inboxIds` replaces the list. */
export async function updateSlaPolicy(stores: SlaPolicyStores, deps: { clock: Clock }, actor: Actor, id: string, input: SlaPolicyInput): Promise<SlaPolicy> {
  const existing = await getSlaPolicy(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const policy = await validated(stores, actor, { ...existing, updatedAt: deps.clock.now() }, input);
  await stores.policies.save(policy, false);
  return policy;
}

export async function deleteSlaPolicy(stores: SlaPolicyStores, actor: Actor, id: string): Promise<void> {
  const policy = await getSlaPolicy(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  await stores.policies.delete(policy.id);
}

function minutesField(name: string, value: unknown, problems: string[]): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TARGET_MINUTES) {
    problems.push(`body.${name} must be a whole number of minutes from 1 to ${MAX_TARGET_MINUTES}, or null`);
    return null;
  }
  return value;
}

async function validated(stores: SlaPolicyStores, actor: Actor, base: SlaPolicy, input: SlaPolicyInput): Promise<SlaPolicy> {
  const problems: string[] = [];
  const policy: SlaPolicy = { ...base };
  if (input.name !== undefined) {
    policy.name = typeof input.name === 'string' ? input.name.trim() : '';
    if (policy.name.length < 1 || policy.name.length > MAX_POLICY_NAME) problems.push(`body.name must be 1 to ${MAX_POLICY_NAME} characters`);
  }
  if (input.description !== undefined) {
    policy.description = input.description === null ? null : String(input.description).trim() || null;
    if (policy.description !== null && policy.description.length > MAX_POLICY_DESCRIPTION) problems.push(`body.description must be at most ${MAX_POLICY_DESCRIPTION} characters`);
  }
  if (input.firstResponseMinutes !== undefined) policy.firstResponseMinutes = minutesField('firstResponseMinutes', input.firstResponseMinutes, problems);
  if (input.nextResponseMinutes !== undefined) policy.nextResponseMinutes = minutesField('nextResponseMinutes', input.nextResponseMinutes, problems);
  if (input.resolutionMinutes !== undefined) policy.resolutionMinutes = minutesField('resolutionMinutes', input.resolutionMinutes, problems);
  if (input.onlyBusinessHours !== undefined) policy.onlyBusinessHours = input.onlyBusinessHours === true;
  if (problems.length === 0 && policy.firstResponseMinutes === null && policy.nextResponseMinutes === null && policy.resolutionMinutes === null) {
    problems.push('A policy needs at least one target: firstResponseMinutes, nextResponseMinutes or resolutionMinutes');
  }
  if (input.inboxIds !== undefined) {
    policy.inboxIds = [...new Set(input.inboxIds)];
    if (policy.inboxIds.length > MAX_POLICY_INBOXES) problems.push(`body.inboxIds may list at most ${MAX_POLICY_INBOXES} inboxes`);
    for (const inboxId of policy.inboxIds) if (!(await stores.inboxes.get(actor.workspaceId, inboxId))) problems.push(`body.inboxIds: ${inboxId} is not an inbox of this workspace`);
  }
  if (problems.length > 0) throw badRequest(problems);
  if (await stores.policies.nameTaken(actor.workspaceId, policy.name, policy.id)) throw conflict(`Another SLA policy is named ${policy.name}`);
  const held = await stores.policies.inboxesHeldElsewhere(policy.inboxIds, policy.id);
  if (held.length > 0) throw conflict(`These inboxes already have another SLA policy (an inbox has one): ${held.join(', ')}`);
  return policy;
}
