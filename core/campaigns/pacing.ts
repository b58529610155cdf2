import { isOpen, nextOpening, type BusinessCalendar, type ZoneRules } from '../helpdesk/sla/business-hours.ts';

/**
 * How fast a campaign sends (issue 8). An unofficial number that sends too fast is flagged by the
 * network, so sends are spaced: one every `60 / messagesPerMinute` seconds plus a random extra of
 * up to `jitterSeconds`, and never more than `messagesPerMinute` in any 60 seconds, however late
 * the pacer wakes. Quiet hours are local times of day when nothing is sent. `messagesPerMinute`
 * null sends as fast as the queue goes (the benchmark's "pacing off"); on official connections
 * the network's per-number throughput ceiling caps it.
 */
export interface Pace {
  messagesPerMinute: number | null;
  jitterSeconds: number;
  quietHours: QuietHours | null;
}

/** `from`–`to` local time (`HH:MM`, 24 h) in `timezone`, every day; `from` after `to` spans midnight. */
export interface QuietHours {
  from: string;
  to: string;
  timezone: string;
}

/** The Cloud API's default throughput per business number: 80 messages a second. */
export const OFFICIAL_MESSAGES_PER_MINUTE = 80 * 60;
/** The most a pacer hands out at once, so a batch stays one short transaction. */
export const MAX_BATCH = 500;
export const WINDOW_MS = 60_000;

/** What the pacer knows when it wakes. */
export interface PacerState {
  /** The earliest time of the next send; null before the first. */
  nextSlotAt: number | null;
  /** Sends made in the last 60 seconds, `(now − 60 s, now]`. */
  sentInWindow: number;
  /** The oldest of those, to know when the window frees up. */
  oldestInWindow: number | null;
}

export interface PacerDecision {
  /** How many recipients to send to now (at most `MAX_BATCH`). */
  count: number;
  /** The next slot after these sends. */
  nextSlotAt: number;
  /** When the pacer should wake next if recipients remain; at or before `now`: at once (a batch cut short by `MAX_BATCH`). */
  wakeAt: number;
}

/**
 * The sends due at `now`. `fraction()` is a uniform number in [0, 1) (the Random port) that
 * draws each gap's jitter. The 60-second count bounds every decision, so however the pacer is woken
 * no window holds more than `messagesPerMinute` sends.
 */
export function dueSends(pace: Pace, state: PacerState, now: number, fraction: () => number, zones: ZoneRules): PacerDecision {
  if (pace.quietHours && !isOpen(sendingHours(pace.quietHours), zones, now)) {
    const opens = nextOpening(sendingHours(pace.quietHours), zones, now) ?? now + WINDOW_MS;
    return { count: 0, nextSlotAt: Math.max(state.nextSlotAt ?? opens, opens), wakeAt: opens };
  }
  if (pace.messagesPerMinute === null) return { count: MAX_BATCH, nextSlotAt: now, wakeAt: now };

  const perMinute = pace.messagesPerMinute;
  const interval = WINDOW_MS / perMinute;
  const windowBudget = Math.max(0, perMinute - state.sentInWindow);
  // A pacer that woke late catches up on missed slots, but never on more than one window's worth.
  let slot = Math.max(state.nextSlotAt ?? now, now - WINDOW_MS);
  let count = 0;
  while (slot <= now && count < Math.min(MAX_BATCH, windowBudget)) {
    count += 1;
    slot += gap(pace, interval, fraction);
  }
  if (count < windowBudget) return { count, nextSlotAt: slot, wakeAt: slot };
  // The window is full: asleep until its oldest send leaves it (or the next slot, if later).
  const oldest = state.oldestInWindow ?? now;
  return { count, nextSlotAt: slot, wakeAt: Math.max(slot, oldest + WINDOW_MS) };
}

function gap(pace: Pace, interval: number, fraction: () => number): number {
  return interval + (pace.jitterSeconds > 0 ? Math.floor(fraction() * pace.jitterSeconds * 1000) : 0);
}

/** Quiet hours as the calendar of when sending is allowed, every day of the week. */
export function sendingHours(quiet: QuietHours): BusinessCalendar {
  const from = minutesOf(quiet.from);
  const to = minutesOf(quiet.to);
  const day =
    from === to
      ? [{ start: 0, end: 1440 }]
      : from > to
        ? [{ start: to, end: from }]
        : [
            ...(from > 0 ? [{ start: 0, end: from }] : []),
            ...(to < 1440 ? [{ start: to, end: 1440 }] : []),
          ];
  return { zone: quiet.timezone, week: Array.from({ length: 7 }, () => day), holidays: new Set() };
}

/** `HH:MM` → minutes of the day; `24:00` is 1440. */
export function minutesOf(hhmm: string): number {
  const match = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(hhmm);
  if (!match) return NaN;
  const minutes = Number(match[1]) * 60 + Number(match[2]);
  return minutes > 1440 ? NaN : minutes;
}

/** The window rule the pacer keeps, for tests and checks: no 60 s window holds more than the pace. */
export function busiestWindow(sendTimes: readonly number[]): number {
  const sorted = [...sendTimes].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= WINDOW_MS) start += 1;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
