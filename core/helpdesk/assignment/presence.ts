import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { badRequest } from '../../shared/errors.ts';

/**
 * Agent availability and presence (spec 3.7): "Values `online`, `busy`, `offline`. Agent sets own
 * value ... Heartbeat `presence:online` every 20 s keeps an agent online; without heartbeats the
 * agent decays to offline on its own (a reload or brief disconnect does not flicker)."
 *
 * A member's presence is two facts: the availability they chose (`online` until they choose) and
 * the time of their last contact (a websocket connection or a heartbeat). What others see, the
 * shown status, follows from both and the clock:
 *
 * | chosen \ last contact | within the TTL (live) | older, or never (stale) |
 * |-----------------------|-----------------------|-------------------------|
 * | online                | online                | offline                 |
 * | busy                  | busy                  | offline                 |
 * | offline               | offline               | offline                 |
 *
 * A disconnect changes neither fact: the member decays only once the TTL has passed since their
 * last contact, so a reload that reconnects within it never shows them offline. The TTL (default
 * 60 s, three missed heartbeats) is a setting of the service.
 */
export const AVAILABILITIES = ['online', 'busy', 'offline'] as const;
export type Availability = (typeof AVAILABILITIES)[number];

export const DEFAULT_AVAILABILITY: Availability = 'online';
/** Clients send `presence:online` this often (spec 3.7). */
export const HEARTBEAT_INTERVAL_SECONDS = 20;
/** Three missed heartbeats. */
export const DEFAULT_PRESENCE_TTL_SECONDS = 60;

export type Liveness = 'live' | 'stale';

/** The table above, as data. */
export const SHOWN_STATUS: Readonly<Record<Availability, Readonly<Record<Liveness, Availability>>>> = {
  online: { live: 'online', stale: 'offline' },
  busy: { live: 'busy', stale: 'offline' },
  offline: { live: 'offline', stale: 'offline' },
};

export interface Presence {
  availability: Availability;
  /** The last connection or heartbeat; null when the member never connected. */
  lastSeenAt: Date | null;
}

/** A member with no presence yet: never seen, so offline whatever they would choose. */
export const NO_PRESENCE: Presence = { availability: DEFAULT_AVAILABILITY, lastSeenAt: null };

export function isAvailability(value: unknown): value is Availability {
  return typeof value === 'string' && (AVAILABILITIES as readonly string[]).includes(value);
}

/**
 * Live while less than the TTL has passed since the last contact. A contact stamped slightly in
 * the future (another server's clock running ahead) counts as live.
 */
export function liveness(presence: Presence, now: Date, ttlMs: number): Liveness {
  if (presence.lastSeenAt === null) return 'stale';
  return now.getTime() - presence.lastSeenAt.getTime() < ttlMs ? 'live' : 'stale';
}

export function shownStatus(presence: Presence | undefined, now: Date, ttlMs: number): Availability {
  const p = presence ?? NO_PRESENCE;
  return SHOWN_STATUS[p.availability][liveness(p, now, ttlMs)];
}

/** A connection or a heartbeat at `at`. Contact times only move forward (late reports change nothing). */
export function heartbeat(presence: Presence, at: Date): Presence {
  if (presence.lastSeenAt !== null && presence.lastSeenAt.getTime() >= at.getTime()) return presence;
  return { ...presence, lastSeenAt: at };
}

export function choose(presence: Presence, availability: Availability): Presence {
  return { ...presence, availability };
}

/** `presence.update` payload's `users`: every member of the workspace with their shown status. */
export type PresenceSnapshot = Record<string, Availability>;

export function presenceSnapshot(memberIds: readonly string[], presences: ReadonlyMap<string, Presence>, now: Date, ttlMs: number): PresenceSnapshot {
  const users: PresenceSnapshot = {};
  for (const userId of memberIds) users[userId] = shownStatus(presences.get(userId), now, ttlMs);
  return users;
}

/**
 * The members of `after` whose status differs from `before`, with their new status. A member
 * missing from `before` was not shown, which reads as offline.
 */
export function presenceChanges(before: PresenceSnapshot, after: PresenceSnapshot): PresenceSnapshot {
  const changed: PresenceSnapshot = {};
  for (const [userId, status] of Object.entries(after)) {
    if ((before[userId] ?? 'offline') !== status) changed[userId] = status;
  }
  return changed;
}

export function checkAvailability(value: unknown): Availability {
  if (!isAvailability(value)) throw badRequest([`body.availability must be one of ${AVAILABILITIES.join(', ')}`]);
  return value;
}

/** Where chosen availabilities are kept (the contact times are the realtime adapter's business). */
export interface AvailabilityStore {
  choose(workspaceId: string, userId: string, availability: Availability): Promise<void>;
}

/**
 * A member sets their own availability (spec 3.7, `PATCH /v3/helpdesk/profile/availability`).
 * Every role works the helpdesk, so every member may; it changes no one else's.
 */
export async function chooseAvailability(store: AvailabilityStore, actor: Actor, value: unknown): Promise<Availability> {
  authorize(actor.roles, 'helpdesk.work', 'write');
  const availability = checkAvailability(value);
  await store.choose(actor.workspaceId, actor.userId, availability);
  return availability;
}
