import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  addBusinessMinutes,
  businessMsBetween,
  isOpen,
  MINUTE_MS,
  nextOpening,
  normaliseDay,
  type BusinessCalendar,
  type WorkingInterval,
} from '../../core/helpdesk/sla/business-hours.ts';
import { intlZoneRules } from '../../adapters/time/zone-rules.ts';

/**
 * The SLA clock in business hours (issue 7: "SLA clock in business hours across time zones and
 * DST (against a simple reference implementation over minutes)").
 *
 * The reference knows nothing of offsets or pieces: it walks real time one UTC minute at a time,
 * asks `Intl` for the zone's wall clock of that minute (weekday, date, hour, minute) and counts
 * the minutes whose wall time falls in a working interval of that weekday on a date that is no
 * holiday. Every zone offset in use is whole minutes and changes on a whole minute, so a minute
 * is open or closed as a whole.
 *
 * Time zones: three with DST in each hemisphere (London, New York, Lord Howe with its half-hour
 * change), Sao Paulo (DST until 2019), Kolkata (+05:30, none) and Kathmandu (+05:45). Start
 * instants are drawn near the zones' offset changes of 2017–2026, or anywhere in those years.
 */

const ZONES = ['America/Sao_Paulo', 'Europe/London', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Asia/Kathmandu'] as const;
const DAY_MS = 1440 * MINUTE_MS;
const FROM = Date.UTC(2017, 0, 1);
const TO = Date.UTC(2026, 11, 31);
/** How far the reference walks (minutes) before it gives up. */
const REFERENCE_LIMIT = 10 * 1440;

const WEEKDAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

interface Wall {
  date: string;
  weekday: number;
  minute: number;
}

const wallFormats = new Map<string, Intl.DateTimeFormat>();
const wallCache = new Map<string, Wall>();

/** The zone's wall clock at a whole UTC minute, straight from `Intl`. */
function wall(zone: string, at: number): Wall {
  const key = `${zone}@${at}`;
  const cached = wallCache.get(key);
  if (cached) return cached;
  let format = wallFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', weekday: 'short', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' });
    wallFormats.set(zone, format);
  }
  const p = Object.fromEntries(format.formatToParts(new Date(at)).map((x) => [x.type, x.value]));
  const result = { date: `${p.year}-${p.month}-${p.day}`, weekday: WEEKDAY_NAMES.indexOf(p.weekday!), minute: Number(p.hour) * 60 + Number(p.minute) };
  if (wallCache.size > 2_000_000) wallCache.clear();
  wallCache.set(key, result);
  return result;
}

function referenceOpen(calendar: BusinessCalendar, at: number): boolean {
  const w = wall(calendar.zone, Math.floor(at / MINUTE_MS) * MINUTE_MS);
  if (calendar.holidays.has(w.date)) return false;
  return calendar.week[w.weekday]!.some((i) => i.start <= w.minute && w.minute < i.end);
}

/** The end of the `minutes`-th open minute from `start` (a whole minute), or null past the limit. */
function referenceDue(calendar: BusinessCalendar, start: number, minutes: number): number | null {
  if (minutes === 0) return start;
  let counted = 0;
  for (let m = 0; m < REFERENCE_LIMIT; m++) {
    const at = start + m * MINUTE_MS;
    if (referenceOpen(calendar, at) && ++counted === minutes) return at + MINUTE_MS;
  }
  return null;
}

function referenceOpenMinutes(calendar: BusinessCalendar, from: number, to: number): number {
  let counted = 0;
  for (let at = from; at < to; at += MINUTE_MS) if (referenceOpen(calendar, at)) counted++;
  return counted;
}

/** Offset changes of a zone between FROM and TO, to the minute (found with the reference's own walk). */
function transitions(zone: string): number[] {
  const found: number[] = [];
  const offset = (at: number) => {
    const w = wall(zone, at);
    const [y, mo, d] = w.date.split('-').map(Number);
    return Date.UTC(y!, mo! - 1, d!) + w.minute * MINUTE_MS - at;
  };
  let previous = offset(FROM);
  for (let at = FROM + 6 * 3600_000; at < TO; at += 6 * 3600_000) {
    const current = offset(at);
    if (current !== previous) {
      let a = at - 6 * 3600_000;
      let b = at;
      while (b - a > MINUTE_MS) {
        const mid = a + Math.floor((b - a) / 2 / MINUTE_MS) * MINUTE_MS;
        if (offset(mid) === previous) a = mid;
        else b = mid;
      }
      found.push(b);
      previous = current;
    }
  }
  return found;
}

const TRANSITIONS = Object.fromEntries(ZONES.map((z) => [z, transitions(z)])) as Record<(typeof ZONES)[number], number[]>;

// Boundaries favour round hours and the hours DST changes touch (00:00–03:30), with any minute too.
const boundary = fc.oneof(
  fc.integer({ min: 0, max: 48 }).map((h) => h * 30),
  fc.integer({ min: 0, max: 14 }).map((q) => q * 15),
  fc.integer({ min: 0, max: 1440 }),
);
const interval = fc.tuple(boundary, boundary).filter(([a, b]) => a !== b).map(([a, b]): WorkingInterval => ({ start: Math.min(a, b), end: Math.max(a, b) }));
const day = fc.oneof(
  { weight: 1, arbitrary: fc.constant([] as WorkingInterval[]) },
  { weight: 1, arbitrary: fc.constant([{ start: 0, end: 1440 }]) },
  { weight: 4, arbitrary: fc.array(interval, { minLength: 1, maxLength: 3 }) },
);
const week = fc.array(day, { minLength: 7, maxLength: 7 }).map((days) => days.map(normaliseDay)).filter((days) => days.some((d) => d.length > 0));

const zone = fc.constantFrom(...ZONES);
/** A whole-minute instant near one of the zone's offset changes (or anywhere, for zones with none). */
const startNear = (z: (typeof ZONES)[number]) =>
  TRANSITIONS[z].length === 0
    ? fc.integer({ min: FROM / MINUTE_MS, max: TO / MINUTE_MS - 20 * 1440 }).map((m) => m * MINUTE_MS)
    : fc.tuple(fc.constantFrom(...TRANSITIONS[z]), fc.integer({ min: -4 * 1440, max: 2 * 1440 })).map(([t, m]) => t + m * MINUTE_MS);

/** A calendar of a zone with holidays among the local dates around `start`. */
const calendarAround = fc
  .tuple(zone, week)
  .chain(([z, w]) =>
    startNear(z).chain((start) =>
      fc.subarray(Array.from({ length: 14 }, (_, i) => wall(z, start + (i - 2) * DAY_MS).date), { maxLength: 4 }).map((holidays) => ({
        start,
        calendar: { zone: z, week: w, holidays: new Set(holidays) } as BusinessCalendar,
      })),
    ),
  );

const RUNS = { numRuns: 150 };

describe('business time against the minute-by-minute reference', () => {
  test('isOpen: open exactly when the wall clock is in a working interval of a working day', () => {
    fc.assert(
      fc.property(calendarAround, fc.integer({ min: -2 * 1440 * 60, max: 4 * 1440 * 60 }), fc.integer({ min: 0, max: 999 }), ({ start, calendar }, seconds, ms) => {
        const at = start + seconds * 1000 + ms;
        expect(isOpen(calendar, intlZoneRules, at)).toBe(referenceOpen(calendar, at));
      }),
      { numRuns: 1000 },
    );
  });

  test('addBusinessMinutes: the end of the N-th open minute', () => {
    fc.assert(
      fc.property(calendarAround, fc.integer({ min: 0, max: 2000 }), ({ start, calendar }, minutes) => {
        const expected = referenceDue(calendar, start, minutes);
        const due = addBusinessMinutes(calendar, intlZoneRules, start, minutes);
        if (expected === null) {
          // Not within the reference's reach: then it lies beyond it (or nowhere).
          expect(due === null || due > start + REFERENCE_LIMIT * MINUTE_MS).toBe(true);
        } else {
          expect(due === null ? null : new Date(due).toISOString()).toBe(new Date(expected).toISOString());
        }
      }),
      RUNS,
    );
  });

  test('businessMsBetween: the open minutes between two instants', () => {
    fc.assert(
      fc.property(calendarAround, fc.integer({ min: 0, max: 4 * 1440 }), fc.integer({ min: 0, max: 4 * 1440 }), ({ start, calendar }, a, b) => {
        const from = start + Math.min(a, b) * MINUTE_MS;
        const to = start + Math.max(a, b) * MINUTE_MS;
        expect(businessMsBetween(calendar, intlZoneRules, from, to)).toBe(referenceOpenMinutes(calendar, from, to) * MINUTE_MS);
        expect(businessMsBetween(calendar, intlZoneRules, to, from)).toBe(0);
      }),
      RUNS,
    );
  });

  test('nextOpening: the first open minute at or after the instant', () => {
    fc.assert(
      fc.property(calendarAround, ({ start, calendar }) => {
        let expected: number | null = null;
        for (let m = 0; m < REFERENCE_LIMIT && expected === null; m++) if (referenceOpen(calendar, start + m * MINUTE_MS)) expected = start + m * MINUTE_MS;
        const opening = nextOpening(calendar, intlZoneRules, start);
        if (expected === null) expect(opening === null || opening >= start + REFERENCE_LIMIT * MINUTE_MS).toBe(true);
        else expect(opening).toBe(expected);
      }),
      RUNS,
    );
  });

  test('two closed instants share their next opening exactly when no open minute lies between them (the out-of-office reply\'s closed period)', () => {
    fc.assert(
      fc.property(calendarAround, fc.integer({ min: 0, max: 3 * 1440 }), fc.integer({ min: 0, max: 3 * 1440 }), ({ start, calendar }, a, b) => {
        const first = start + Math.min(a, b) * MINUTE_MS;
        const second = start + Math.max(a, b) * MINUTE_MS;
        if (referenceOpen(calendar, first) || referenceOpen(calendar, second)) return;
        const same = nextOpening(calendar, intlZoneRules, first) === nextOpening(calendar, intlZoneRules, second);
        expect(same).toBe(referenceOpenMinutes(calendar, first, second) === 0);
      }),
      RUNS,
    );
  });

  test('from any instant (not only whole minutes), the business time up to the due instant is the target', () => {
    fc.assert(
      fc.property(calendarAround, fc.integer({ min: 0, max: 59_999 }), fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 3000 }), ({ start, calendar }, ms, n1, n2) => {
        const from = start + ms;
        const [small, large] = [Math.min(n1, n2), Math.max(n1, n2)];
        const dueSmall = addBusinessMinutes(calendar, intlZoneRules, from, small);
        const dueLarge = addBusinessMinutes(calendar, intlZoneRules, from, large);
        if (dueSmall === null || dueLarge === null) return;
        expect(businessMsBetween(calendar, intlZoneRules, from, dueLarge)).toBe(large * MINUTE_MS);
        expect(dueSmall).toBeLessThanOrEqual(dueLarge);
        // The due instant of a positive target is never in a closed stretch's middle: the minute before it was open.
        if (large > 0) expect(isOpen(calendar, intlZoneRules, dueLarge - 1)).toBe(true);
      }),
      RUNS,
    );
  });

  test('no business hours (null calendar) is plain time', () => {
    fc.assert(
      fc.property(fc.integer({ min: FROM, max: TO }), fc.integer({ min: 0, max: 100_000 }), (start, minutes) => {
        expect(addBusinessMinutes(null, intlZoneRules, start, minutes)).toBe(start + minutes * MINUTE_MS);
        expect(businessMsBetween(null, intlZoneRules, start, start + minutes * MINUTE_MS)).toBe(minutes * MINUTE_MS);
        expect(isOpen(null, intlZoneRules, start)).toBe(true);
      }),
    );
  });
});

describe('daylight saving days, by hand', () => {
  const everyDay = (i: WorkingInterval[]) => Array.from({ length: 7 }, () => i);
  const at = (iso: string) => Date.parse(iso);

  test('New York: a 00:00–06:00 shift lasts 5 hours on the spring-forward Sunday and 7 on the fall-back one', () => {
    const calendar: BusinessCalendar = { zone: 'America/New_York', week: everyDay([{ start: 0, end: 360 }]), holidays: new Set() };
    // 2025-03-09 00:00 EST = 05:00Z; 06:00 EDT = 10:00Z. 2025-11-02 00:00 EDT = 04:00Z; 06:00 EST = 11:00Z.
    expect(businessMsBetween(calendar, intlZoneRules, at('2025-03-09T04:00:00Z'), at('2025-03-09T12:00:00Z'))).toBe(5 * 60 * MINUTE_MS);
    expect(businessMsBetween(calendar, intlZoneRules, at('2025-11-02T03:00:00Z'), at('2025-11-02T12:00:00Z'))).toBe(7 * 60 * MINUTE_MS);
    expect(addBusinessMinutes(calendar, intlZoneRules, at('2025-03-09T05:00:00Z'), 300)).toBe(at('2025-03-09T10:00:00Z'));
  });

  test('London: two business hours from Friday 16:00 across the clocks going forward end Monday 10:00 BST', () => {
    const weekdays = [...Array.from({ length: 5 }, () => [{ start: 540, end: 1020 }]), [], []];
    const calendar: BusinessCalendar = { zone: 'Europe/London', week: weekdays, holidays: new Set() };
    // Friday 2025-03-28 16:00 GMT; Monday 2025-03-31 10:00 BST = 09:00Z.
    expect(new Date(addBusinessMinutes(calendar, intlZoneRules, at('2025-03-28T16:00:00Z'), 120)!).toISOString()).toBe('2025-03-31T09:00:00.000Z');
    // With Monday a holiday: Tuesday 10:00 BST.
    const holiday = { ...calendar, holidays: new Set(['2025-03-31']) };
    expect(new Date(addBusinessMinutes(holiday, intlZoneRules, at('2025-03-28T16:00:00Z'), 120)!).toISOString()).toBe('2025-04-01T09:00:00.000Z');
  });

  test('Lord Howe: the half-hour change shortens a 01:00–03:00 shift to 90 minutes', () => {
    const calendar: BusinessCalendar = { zone: 'Australia/Lord_Howe', week: everyDay([{ start: 60, end: 180 }]), holidays: new Set() };
    // 2025-10-05 02:00 local (+10:30) jumps to 02:30 (+11): 01:00 = 2025-10-04T14:30Z, 03:00 = 16:00Z.
    expect(businessMsBetween(calendar, intlZoneRules, at('2025-10-04T12:00:00Z'), at('2025-10-04T18:00:00Z'))).toBe(90 * MINUTE_MS);
  });

  test('Kolkata (+05:30): 09:00–17:00 local is 03:30Z–11:30Z', () => {
    const calendar: BusinessCalendar = { zone: 'Asia/Kolkata', week: everyDay([{ start: 540, end: 1020 }]), holidays: new Set() };
    expect(isOpen(calendar, intlZoneRules, at('2025-06-02T03:29:59Z'))).toBe(false);
    expect(isOpen(calendar, intlZoneRules, at('2025-06-02T03:30:00Z'))).toBe(true);
    expect(nextOpening(calendar, intlZoneRules, at('2025-06-02T11:30:00Z'))).toBe(at('2025-06-03T03:30:00Z'));
  });
});
