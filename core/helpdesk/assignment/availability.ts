import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import type { Clock } from '../../shared/ports.ts';
import { assertHelpdeskWritable, type WorkspacePlans } from '../plan-gate.ts';
import { NO_PRESENCE, shownStatus, type Availability, type Presence } from './presence.ts';

/**
 * A member's own availability over REST (spec 3.7, 4.6: `PATCH` and `GET
 * /v3/helpdesk/profile/availability`). The answer names both facts of presence.ts: the value
 * the member chose (`availability`, `online` until they choose) and what the workspace sees and
 * round-robin uses (`status`): the chosen value while a websocket of theirs is live (connected or
 * heartbeating within the TTL), `offline` otherwise. Choosing `online` over REST alone therefore
 * shows `offline` until the member's helpdesk websocket connects.
 */
export interface AvailabilityView {
  userId: string;
  availability: Availability;
  status: Availability;
}

export interface OwnPresenceStore {
  /** The member's presence in the workspace; undefined when they never chose or connected. */
  presenceOf(workspaceId: string, userId: string): Promise<Presence | undefined>;
}

export interface AvailabilityDeps {
  clock: Clock;
  presenceTtlMs: number;
}

export function availabilityView(userId: string, presence: Presence | undefined, now: Date, ttlMs: number): AvailabilityView {
  return { userId, availability: (presence ?? NO_PRESENCE).availability, status: shownStatus(presence, now, ttlMs) };
}

/** Every member reads their own (any role, any plan: a read). */
export async function ownAvailability(store: OwnPresenceStore, deps: AvailabilityDeps, actor: Actor): Promise<AvailabilityView> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  return availabilityView(actor.userId, await store.presenceOf(actor.workspaceId, actor.userId), deps.clock.now(), deps.presenceTtlMs);
}

/**
 * Before a member chooses: every role works the helpdesk, and setting one's availability is
 * working it (it decides whether round-robin hands them conversations), so it is a helpdesk
 * write and needs the PRO plan like replying or assigning (spec 4.6, 5.4).
 */
export async function assertMayChooseAvailability(plans: WorkspacePlans, actor: Actor): Promise<void> {
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(plans, actor.workspaceId);
}
