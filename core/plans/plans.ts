import { coded } from '../shared/errors.ts';

export const PLAN_NAMES = ['FREE', 'PRO'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

/** What a plan allows. The numbers are configuration (see the README), these are defaults. */
export interface PlanLimits {
  /** Connections a workspace may hold at once. */
  connections: number;
  /** Message credits granted at the start of each calendar month (UTC). */
  messagesPerMonth: number;
  /** Official (Cloud API) connections and campaigns need a paid plan. */
  officialConnections: boolean;
  /** Writing in the helpdesk. */
  helpdeskWrite: boolean;
}

export type PlanCatalog = Record<PlanName, PlanLimits>;

export const DEFAULT_PLANS: PlanCatalog = {
  FREE: { connections: 1, messagesPerMonth: 1_000, officialConnections: false, helpdeskWrite: false },
  PRO: { connections: 10, messagesPerMonth: 100_000, officialConnections: true, helpdeskWrite: true },
};

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

/** Refuses one more connection when the plan's quota is used up. */
export function assertConnectionHeadroom(plan: PlanLimits, connectionsHeld: number): void {
  if (connectionsHeld >= plan.connections) {
    throw coded('forbidden', 'USER_PLAN_EXCEEDED_CONNECTIONS', `Your plan allows ${plan.connections} connection(s); delete one or upgrade the plan.`);
  }
}

export const messagesExceeded = (wanted: number, available: number) =>
  coded('forbidden', 'USER_PLAN_EXCEEDED_MESSAGES', `This needs ${wanted} message credit(s) but only ${available} remain on your plan this month.`);
