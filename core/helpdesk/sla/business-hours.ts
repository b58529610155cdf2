/**
 * Business time of an inbox (spec 2.1: the inbox `timezone` is the "reference for working hours,
 * out-of-office replies and business-hours SLAs"). Pure: the zone's offsets come through the
 * `ZoneRules` port (the runtime's zone database lives in an adapter), instants are milliseconds.
 *
 * The calendar is a week of working intervals in the zone's local wall time plus holidays (local
 * dates closed all day). An instant is open when its local wall time falls in an interval of its
 * local weekday and its local date is no holiday. Business time is real time spent open: the
 * clock runs while the inbox is open and stops while it is closed. Across a DST change this is
 * what a person at the desk lives through: on a spring-forward day an interval 00:00–06:00 lasts
 * five hours (02:00–03:00 never happens), on a fall-back day seven (01:00–02:00 happens twice).
 *
 * How: real time is cut into pieces of constant offset (found by probing the offset and
 * bisecting a change to the millisecond); inside a piece local time is real time shifted by the
 * offset, so each local day's intervals map to real spans by subtracting it. A null calendar is
 * an inbox with no business hours: always open (24/7).
 */

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const MINUTE_MS = 60_000;
export const DAY_MINUTES = 1440;
const DAY_MS = DAY_MINUTES * MINUTE_MS;

/** Minutes of the local day, `[start, end)`, 0 ≤ start < end ≤ 1440 (1440 is 24:00). */
export interface WorkingInterval {
  start: number;
  end: number;
}

export interface BusinessCalendar {
  /** IANA zone name (the inbox's `timezone`). */
  zone: string;
  /** Seven lists, Monday first, each sorted and non-overlapping (see `normaliseWeek`). */
  week: readonly (readonly WorkingInterval[])[];
  /** Local dates `YYYY-MM-DD` closed all day. */
  holidays: ReadonlySet<string>;
}

/** The zone database: how many minutes the zone's wall clock is ahead of UTC at an instant. */
export interface ZoneRules {
  offsetMinutes(zone: string, at: number): number;
}

/** How far ahead due times and openings are looked for; beyond it a target is not reachable. */
export const HORIZON_MS = 3653 * DAY_MS;
/** Probe step while looking for the next offset change (no zone changes twice within a day). */
const PROBE_MS = DAY_MS;
/** Pieces are cut at least this often, so a long scan yields spans as it goes. */
const MAX_PIECE_MS = 7 * DAY_MS;

/** Monday = 0 … Sunday = 6 of a local day number (days since 1970-01-01, a Thursday). */
export function weekdayIndex(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}

/** `YYYY-MM-DD` of a local day number. */
export function localDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** The first instant after `from` (and at most `limit`) where the zone's offset differs from `offsetMs`. */
function offsetChange(rules: ZoneRules, zone: string, from: number, offsetMs: number, limit: number): number {
  const differs = (at: number) => rules.offsetMinutes(zone, at) * MINUTE_MS !== offsetMs;
  let low = from;
  while (low < limit) {
    const high = Math.min(low + PROBE_MS, limit);
    if (differs(high)) {
      // offset(low) is the piece's, offset(high) is not: bisect to the first differing millisecond.
      let a = low;
      let b = high;
      while (b - a > 1) {
        const mid = Math.floor((a + b) / 2);
        if (differs(mid)) b = mid;
        else a = mid;
      }
      return b;
    }
    low = high;
  }
  return limit;
}

/**
 * The open spans `[start, end)` of real time within `[from, until)`, in order. Adjacent spans
 * (an interval ending at 24:00 and the next day's starting at 00:00) come as two.
 */
export function* openSpans(calendar: BusinessCalendar | null, rules: ZoneRules, from: number, until: number): Generator<[number, number]> {
  if (calendar === null) {
    if (from < until) yield [from, until];
    return;
  }
  let at = from;
  while (at < until) {
    const offset = rules.offsetMinutes(calendar.zone, at) * MINUTE_MS;
    const pieceEnd = offsetChange(rules, calendar.zone, at, offset, Math.min(until, at + MAX_PIECE_MS));
    const lastDay = Math.floor((pieceEnd - 1 + offset) / DAY_MS);
    for (let day = Math.floor((at + offset) / DAY_MS); day <= lastDay; day++) {
      if (calendar.holidays.size > 0 && calendar.holidays.has(localDate(day))) continue;
      for (const interval of calendar.week[weekdayIndex(day)] ?? []) {
        const start = Math.max(day * DAY_MS + interval.start * MINUTE_MS - offset, at);
        const end = Math.min(day * DAY_MS + interval.end * MINUTE_MS - offset, pieceEnd);
        if (start < end) yield [start, end];
      }
    }
    at = pieceEnd;
  }
}

/** Whether the inbox is open at the instant `at`. */
export function isOpen(calendar: BusinessCalendar | null, rules: ZoneRules, at: number): boolean {
  if (calendar === null) return true;
  const local = at + rules.offsetMinutes(calendar.zone, at) * MINUTE_MS;
  const day = Math.floor(local / DAY_MS);
  if (calendar.holidays.has(localDate(day))) return false;
  const minute = (local - day * DAY_MS) / MINUTE_MS;
  return (calendar.week[weekdayIndex(day)] ?? []).some((i) => i.start <= minute && minute < i.end);
}

/**
 * The instant at which `minutes` business minutes have passed since `start`: the clock runs only
 * while open. Zero minutes is `start` itself. Null when the calendar does not open enough
 * within `HORIZON_MS` (a target it cannot meet).
 */
export function addBusinessMinutes(calendar: BusinessCalendar | null, rules: ZoneRules, start: number, minutes: number): number | null {
  let left = minutes * MINUTE_MS;
  if (left <= 0) return start;
  for (const [from, to] of openSpans(calendar, rules, start, start + HORIZON_MS)) {
    if (to - from >= left) return from + left;
    left -= to - from;
  }
  return null;
}

/** Business milliseconds between two instants (0 when `to` is not after `from`). */
export function businessMsBetween(calendar: BusinessCalendar | null, rules: ZoneRules, from: number, to: number): number {
  let total = 0;
  for (const [a, b] of openSpans(calendar, rules, from, to)) total += b - a;
  return total;
}

/** Business minutes between two instants (fractional when they are not on whole minutes). */
export function businessMinutesBetween(calendar: BusinessCalendar | null, rules: ZoneRules, from: number, to: number): number {
  return businessMsBetween(calendar, rules, from, to) / MINUTE_MS;
}

/** When the inbox next opens: `at` itself when open, null when it never does within the horizon. */
export function nextOpening(calendar: BusinessCalendar | null, rules: ZoneRules, at: number): number | null {
  if (isOpen(calendar, rules, at)) return at;
  for (const [from] of openSpans(calendar, rules, at, at + HORIZON_MS)) return from;
  return null;
}

/** Sorts a day's intervals and merges those that overlap or touch. */
export function normaliseDay(intervals: readonly WorkingInterval[]): WorkingInterval[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: WorkingInterval[] = [];
  for (const interval of sorted) {
    const last = merged[merged.length - 1];
    if (last && interval.start <= last.end) last.end = Math.max(last.end, interval.end);
    else merged.push({ ...interval });
  }
  return merged;
}
