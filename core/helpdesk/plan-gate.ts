import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { coded } from '../shared/errors.ts';
import type { PlanName } from '../plans/plans.ts';

/** Spec 5.4: "Writing in the helpdesk requires the PRO plan; any member can read." */
export const HELPDESK_PLANS: readonly PlanName[] = ['PRO'];

/** The plan of a workspace (a port: core does not know where workspaces live). */
export interface WorkspacePlans {
  planOf(workspaceId: string): Promise<PlanName | undefined>;
}

/** Spec 7.2: 403 `{ message: 'HELPDESK_PLAN_REQUIRED', hint }`. */
export const helpdeskPlanRequired = () => coded('forbidden', 'HELPDESK_PLAN_REQUIRED', 'The helpdesk is available on the PRO plan');

export function helpdeskWritable(plan: PlanName | undefined): boolean {
  return plan !== undefined && HELPDESK_PLANS.includes(plan);
}

/** Every helpdesk write (create, reply, assign, configure) goes through here; reads never do. */
export async function assertHelpdeskWritable(plans: WorkspacePlans, workspaceId: string): Promise<void> {
  if (!helpdeskWritable(await plans.planOf(workspaceId))) throw helpdeskPlanRequired();
}

/**
 * Configuring the helpdesk (inboxes, teams, labels, bots, SLA, …): the `helpdesk.configure`
 * capability (Managers and above) first, so a role's 403 comes before the plan's, then the plan.
 */
export async function assertHelpdeskConfigurable(plans: WorkspacePlans, actor: Actor): Promise<void> {
  authorize(actor.roles, 'helpdesk.configure', 'write');
  await assertHelpdeskWritable(plans, actor.workspaceId);
}
