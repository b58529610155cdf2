import type { PluginContext } from '../../kernel/context.ts';
import type { RealtimeHub } from '../../kernel/realtime.ts';
import type { Actor } from '../../../core/identity/identity.ts';
import {
  chooseAvailability,
  DEFAULT_PRESENCE_TTL_SECONDS,
  presenceChanges,
  presenceSnapshot,
  shownStatus,
  type Availability,
  type PresenceSnapshot,
} from '../../../core/helpdesk/assignment/presence.ts';
import type { Clock } from '../../../core/shared/ports.ts';
import { presenceStore, type PresenceRow, type PresenceStore } from './presence-store.ts';
import { HELPDESK_NAMESPACE, workspaceRoom } from './rooms.ts';

/**
 * Presence as the workspace sees it (spec 3.7, 6.7): contacts and chosen availabilities are kept
 * in Postgres, so every server process computes the same shown status; a change is announced
 * with `presence.update` (every member's status) to the workspace's room, by whichever process
 * wins the compare-and-set on `announced` (presence-store.ts), so exactly once, and changes
 * close together in one snapshot (PRESENCE_COALESCE_MS).
 */
export interface PresenceDeps {
  store: PresenceStore;
  hub: RealtimeHub | undefined;
  clock: Clock;
  ttlMs: number;
  log: PluginContext['log'];
}

export function presenceDeps(ctx: PluginContext): PresenceDeps {
  return {
    store: ctx.storage.read(presenceStore),
    hub: ctx.realtime,
    clock: ctx.clock,
    log: ctx.log,
    ttlMs: (ctx.config.helpdeskPresenceTtlSeconds ?? DEFAULT_PRESENCE_TTL_SECONDS) * 1000,
  };
}

/** Every member of the workspace with their shown status (the `users` of `presence.update`). */
export async function workspacePresence(deps: PresenceDeps, workspaceId: string): Promise<PresenceSnapshot> {
  const { memberIds, presences } = await deps.store.workspace(workspaceId);
  return presenceSnapshot(memberIds, presences, deps.clock.now(), deps.ttlMs);
}

/** A connection or a `presence:online` heartbeat: the member is live (again). */
export async function recordContact(deps: PresenceDeps, workspaceId: string, userId: string): Promise<void> {
  const row = await deps.store.touch(workspaceId, userId, deps.clock.now());
  await announceChanges(deps, [row]);
}

/**
 * Spec 3.7: the member sets their own availability (`PATCH /v3/helpdesk/profile/availability`
 * calls this); the workspace hears of it when it changes what they see.
 */
export async function setHelpdeskAvailability(ctx: PluginContext, actor: Actor, value: unknown): Promise<Availability> {
  const deps = presenceDeps(ctx);
  let row: PresenceRow | undefined;
  const availability = await chooseAvailability(
    {
      async choose(workspaceId, userId, chosen) {
        row = await deps.store.choose(workspaceId, userId, chosen);
      },
    },
    actor,
    value,
  );
  if (row) await announceChanges(deps, [row]);
  return availability;
}

/**
 * Decay: members announced online or busy whose last contact is now older than the TTL. Run
 * periodically by every server process; the compare-and-set keeps it to one announcement.
 */
export async function sweepPresence(deps: PresenceDeps): Promise<void> {
  await announceChanges(deps, await deps.store.announcedLive());
}

/** How often a server sweeps: a quarter of the TTL (decay shows at most that late), within 0.25–5 s. */
export function sweepIntervalMs(ttlMs: number): number {
  return Math.min(5_000, Math.max(250, Math.floor(ttlMs / 4)));
}

/** Announces, once per workspace, the members whose shown status is no longer the one announced. */
async function announceChanges(deps: PresenceDeps, rows: PresenceRow[]): Promise<void> {
  const now = deps.clock.now();
  const byWorkspace = new Map<string, PresenceRow[]>();
  for (const row of rows) byWorkspace.set(row.workspaceId, [...(byWorkspace.get(row.workspaceId) ?? []), row]);
  for (const [workspaceId, members] of byWorkspace) {
    const announced: PresenceSnapshot = Object.fromEntries(members.map((m) => [m.userId, m.announced]));
    const shown: PresenceSnapshot = Object.fromEntries(members.map((m) => [m.userId, shownStatus(m, now, deps.ttlMs)]));
    const changes = presenceChanges(announced, shown);
    let moved = false;
    for (const member of members) {
      const to = changes[member.userId];
      if (to !== undefined && (await deps.store.announce(member, to))) moved = true;
    }
    if (moved) await publish(deps, workspaceId);
  }
}

/**
 * How long a workspace's announcement waits for more changes to go with it: a desk of 500
 * signing in at nine sends a few dozen snapshots, not 500 of 500 members to each of 500 sockets.
 * Every snapshot is taken when it goes, so it holds every change made meanwhile.
 */
export const PRESENCE_COALESCE_MS = 300;
const scheduled = new WeakMap<RealtimeHub, Map<string, ReturnType<typeof setTimeout>>>();

/** The announcements still waiting are dropped (the hub is closing). */
export function withdrawPresenceAnnouncements(hub: RealtimeHub | undefined): void {
  const pending = hub && scheduled.get(hub);
  for (const timer of pending?.values() ?? []) clearTimeout(timer);
  pending?.clear();
}

async function publish(deps: PresenceDeps, workspaceId: string): Promise<void> {
  const hub = deps.hub;
  if (!hub) return;
  const pending = scheduled.get(hub) ?? scheduled.set(hub, new Map()).get(hub)!;
  if (pending.has(workspaceId)) return;
  const timer = setTimeout(() => {
    pending.delete(workspaceId);
    workspacePresence(deps, workspaceId)
      .then((users) => hub.emit(HELPDESK_NAMESPACE, [workspaceRoom(workspaceId)], 'presence.update', { users }))
      .catch((error: unknown) => deps.log.error({ workspaceId, error: { message: error instanceof Error ? error.message : String(error) } }, 'helpdesk presence announcement failed'));
  }, PRESENCE_COALESCE_MS);
  timer.unref?.();
  pending.set(workspaceId, timer);
}
