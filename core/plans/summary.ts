import type { Actor, IdentityStore } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { notFound } from '../shared/errors.ts';
import { messageHeadroom, type CreditStore, type MeteringDeps, type MessageHeadroom } from './metering.ts';
import type { PlanName } from './plans.ts';

export interface UsageStore {
  connectionsHeld(workspaceId: string): Promise<number>;
}

/** `GET /v3/summary`: the plan and how much of it is left. */
export interface PlanSummary {
  workspaceId: string;
  plan: PlanName;
  connections: { limit: number; used: number; remaining: number };
  messages: MessageHeadroom;
  features: { officialConnections: boolean; helpdeskWrite: boolean };
}

export async function planSummary(
  stores: { identity: IdentityStore; credits: CreditStore; usage: UsageStore },
  deps: MeteringDeps,
  actor: Actor,
): Promise<PlanSummary> {
  authorize(actor.roles, 'workspace.read', 'read');
  const workspace = await stores.identity.getWorkspace(actor.workspaceId);
  if (!workspace) throw notFound(`Workspace ${actor.workspaceId} not found`);
  const limits = deps.plans[workspace.plan];
  const used = await stores.usage.connectionsHeld(workspace.id);
  return {
    workspaceId: workspace.id,
    plan: workspace.plan,
    connections: { limit: limits.connections, used, remaining: Math.max(0, limits.connections - used) },
    messages: await messageHeadroom(stores.credits, deps, workspace),
    features: { officialConnections: limits.officialConnections, helpdeskWrite: limits.helpdeskWrite },
  };
}
