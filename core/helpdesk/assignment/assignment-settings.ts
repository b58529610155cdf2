import type { Actor } from '../../identity/identity.ts';
import { badRequest } from '../../shared/errors.ts';
import type { Clock } from '../../shared/ports.ts';
import { visibleInbox, type InboxStore } from '../inboxes/inboxes.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';

/**
 * The per-inbox switch of automatic assignment (`GET`/`PUT /v3/helpdesk/inboxes/{id}/assignment`).
 * On by default: an inbox never configured assigns its new conversations by round-robin
 * (core/helpdesk/assignment/round-robin.ts). Switched off, new conversations stay unassigned for people to
 * take. Reading it is reading the inbox's settings (any member who sees the inbox); changing it
 * is configuring the helpdesk (Owner, Admin, Manager) on the PRO plan.
 */
export interface AssignmentSettings {
  inboxId: string;
  enabled: boolean;
  /** When it was last changed; null while it never was (the default applies). */
  updatedAt: Date | null;
}

export const DEFAULT_ASSIGNMENT_ENABLED = true;

export interface AssignmentSettingsStore {
  get(inboxId: string): Promise<AssignmentSettings | undefined>;
  put(workspaceId: string, settings: AssignmentSettings): Promise<void>;
}

export interface AssignmentSettingsStores {
  inboxes: InboxStore;
  plans: WorkspacePlans;
  settings: AssignmentSettingsStore;
}

export async function getAssignmentSettings(stores: AssignmentSettingsStores, actor: Actor, inboxId: string): Promise<AssignmentSettings> {
  const inbox = await visibleInbox(stores, actor, inboxId);
  return (await stores.settings.get(inbox.id)) ?? { inboxId: inbox.id, enabled: DEFAULT_ASSIGNMENT_ENABLED, updatedAt: null };
}

export async function setAssignmentSettings(stores: AssignmentSettingsStores, deps: { clock: Clock }, actor: Actor, inboxId: string, input: { enabled: unknown }): Promise<AssignmentSettings> {
  const inbox = await visibleInbox(stores, actor, inboxId);
  await assertHelpdeskConfigurable(stores.plans, actor);
  if (typeof input.enabled !== 'boolean') throw badRequest(['body.enabled must be a boolean']);
  const settings: AssignmentSettings = { inboxId: inbox.id, enabled: input.enabled, updatedAt: deps.clock.now() };
  await stores.settings.put(inbox.workspaceId, settings);
  return settings;
}
