import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { intlZoneRules } from '../../adapters/time/zone-rules.ts';
import { busiestWindow, dueSends, MAX_BATCH, minutesOf, WINDOW_MS, type Pace } from '../../core/campaigns/pacing.ts';

/**
 * The pacer's decision (core/campaigns/pacing.ts), simulated over random wake-ups. Issue 8: "a pace
 * (messages per minute, with random jitter and optional quiet hours for unofficial connections)";
 * Tests: "pacing never exceeded in any window". pacing.ts: "one every `60 / messagesPerMinute`
 * seconds plus a random extra of up to `jitterSeconds`, and never more than `messagesPerMinute` in
 * any 60 seconds, however late the pacer wakes. Quiet hours are local times of day when nothing is
 * sent. `messagesPerMinute` null sends as fast as the queue goes".
 *
 * The simulation keeps the pacer state as runCampaign does: the sends of the last 60 s
 * `(now − 60 s, now]` and their oldest, and the next slot (kept when a run sent nothing it was
 * allowed to, as runCampaign keeps it when every recipient of the batch had opted out: not here).
 */

const T0 = Date.parse('2027-03-20T08:17:00.000Z');

/** A uniform fraction in [0, 1) from a seed (xorshift32): the Random port. */
function fractions(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/** A time as runCampaign stores it: `new Date(ms)` keeps whole milliseconds. */
const asStored = (ms: number) => new Date(ms).getTime();

type Wake = { kind: 'onTime' } | { kind: 'early'; ms: number } | { kind: 'late'; ms: number } | { kind: 'jump'; ms: number };

const wakeArb: fc.Arbitrary<Wake> = fc.oneof(
  fc.constant({ kind: 'onTime' as const }),
  fc.integer({ min: 1, max: 20_000 }).map((ms) => ({ kind: 'early' as const, ms })),
  fc.integer({ min: 1, max: 90_000 }).map((ms) => ({ kind: 'late' as const, ms })),
  fc.integer({ min: 0, max: 6 * 3_600_000 }).map((ms) => ({ kind: 'jump' as const, ms })),
);

interface Run {
  sends: number[];
  decisions: Array<{ now: number; count: number; wakeAt: number }>;
}

/** Runs the pacer over these wake-ups, with an endless queue. */
function simulate(pace: Pace, wakes: readonly Wake[], seed: number, onStep?: (sends: number[], now: number) => void): Run {
  const fraction = fractions(seed);
  const sends: number[] = [];
  const decisions: Run['decisions'] = [];
  let nextSlotAt: number | null = null;
  let now = T0;
  let wakeAt = T0;
  for (const wake of wakes) {
    if (wake.kind === 'onTime') now = Math.max(now, wakeAt);
    else if (wake.kind === 'early') now = Math.max(now, wakeAt - wake.ms);
    else if (wake.kind === 'late') now = Math.max(now, wakeAt + wake.ms);
    else now += wake.ms;
    const inWindow = sends.filter((t) => t > now - WINDOW_MS);
    const decision = dueSends(pace, { nextSlotAt, sentInWindow: inWindow.length, oldestInWindow: inWindow.length > 0 ? Math.min(...inWindow) : null }, now, fraction, intlZoneRules);
    expect(decision.count).toBeGreaterThanOrEqual(0);
    expect(decision.count).toBeLessThanOrEqual(MAX_BATCH);
    // Later than now, unless the batch cap stopped it with slots still due (then: again at once).
    if (decision.count < MAX_BATCH) expect(decision.wakeAt).toBeGreaterThan(now);
    for (let i = 0; i < decision.count; i++) sends.push(now);
    // runCampaign keeps both as Dates (whole milliseconds), and its clock reads whole milliseconds.
    nextSlotAt = asStored(decision.nextSlotAt);
    wakeAt = asStored(decision.wakeAt);
    decisions.push({ now, count: decision.count, wakeAt });
    onStep?.(sends, now);
  }
  return { sends, decisions };
}

const paceArb = fc.record({
  messagesPerMinute: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 11, max: 600 })),
  jitterSeconds: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 })),
  quietHours: fc.constant(null),
});

/** The local minute of the day at `at` in `zone`. */
function localMinute(zone: string, at: number): number {
  const local = at + intlZoneRules.offsetMinutes(zone, at) * 60_000;
  return Math.floor(((local % 86_400_000) + 86_400_000) % 86_400_000 / 60_000);
}

function inQuietHours(from: number, to: number, minute: number): boolean {
  if (from === to) return false;
  return from < to ? minute >= from && minute < to : minute >= from || minute < to;
}

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

describe('dueSends: the pace (core/campaigns/pacing.ts)', () => {
  test('however the pacer is woken (early, on time, late, after a jump of the clock), no 60 s window holds more than messagesPerMinute sends', () => {
    fc.assert(
      fc.property(paceArb, fc.array(wakeArb, { minLength: 1, maxLength: 120 }), fc.integer(), (pace, wakes, seed) => {
        simulate(pace, wakes, seed, (sends) => {
          expect(busiestWindow(sends)).toBeLessThanOrEqual(pace.messagesPerMinute);
        });
      }),
      { numRuns: 400 },
    );
  });

  test('woken at each wakeAt, the sends are one at a time, 60/mpm seconds apart plus at most the jitter (jitter only lengthens gaps)', () => {
    fc.assert(
      fc.property(paceArb, fc.integer({ min: 2, max: 80 }), fc.integer(), (pace, steps, seed) => {
        const run = simulate(pace, Array.from({ length: steps }, () => ({ kind: 'onTime' }) as const), seed);
        const interval = WINDOW_MS / pace.messagesPerMinute!;
        // Each wake-up is at a slot: one send, and the next wake-up is the next slot. Slots kept in
        // whole milliseconds can put mpm + 1 slots inside 60 s (each gap rounded down by < 1 ms):
        // then the window is full and that wake-up sends nothing and sleeps until the window frees.
        run.decisions.forEach((d, i) => {
          expect(d.count).toBeLessThanOrEqual(1);
          if (d.count === 0) {
            const inWindow = run.sends.filter((t) => t > d.now - WINDOW_MS && t <= d.now);
            expect(inWindow.length).toBe(pace.messagesPerMinute);
            expect(d.wakeAt).toBe(Math.min(...inWindow) + WINDOW_MS);
            expect(i).toBeGreaterThanOrEqual(pace.messagesPerMinute!);
          }
        });
        for (let i = 1; i < run.sends.length; i++) {
          const gap = run.sends[i]! - run.sends[i - 1]!;
          // Slots are kept in whole milliseconds (a Date): a gap may be the interval rounded down.
          expect(gap).toBeGreaterThan(interval - 1);
          // No longer than the gap drawn, unless the send waited for the window to free up.
          const waitedForWindow = i >= pace.messagesPerMinute! && run.sends[i] === run.sends[i - pace.messagesPerMinute!]! + WINDOW_MS;
          if (!waitedForWindow) {
            expect(gap).toBeLessThanOrEqual(interval + pace.jitterSeconds * 1000);
            if (pace.jitterSeconds === 0) expect(gap).toBeLessThan(interval + 1);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  // Slept longer than any gap (60 s + 30 s of jitter at most here): a send is due at once.
  test('a pacer that slept through many slots catches up on at most one window, never past the pace', () => {
    fc.assert(
      fc.property(paceArb, fc.integer({ min: 91_000, max: 24 * 3_600_000 }), fc.integer(), (pace, sleep, seed) => {
        const run = simulate(pace, [{ kind: 'onTime' }, { kind: 'jump', ms: sleep }, { kind: 'onTime' }, { kind: 'onTime' }], seed);
        expect(run.decisions[0]!.count).toBe(1);
        expect(run.decisions[1]!.count).toBeGreaterThanOrEqual(1);
        expect(run.decisions[1]!.count).toBeLessThanOrEqual(Math.min(pace.messagesPerMinute!, MAX_BATCH));
        expect(busiestWindow(run.sends)).toBeLessThanOrEqual(pace.messagesPerMinute!);
      }),
    );
  });

  test('quiet hours: nothing is sent at a local time inside them (Europe/Paris, America/Sao_Paulo, UTC…), and sending resumes after them', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Europe/Paris', 'America/Sao_Paulo', 'UTC', 'Asia/Kolkata', 'America/New_York', 'Australia/Lord_Howe'),
        fc.integer({ min: 0, max: 1439 }),
        fc.integer({ min: 0, max: 1440 }),
        fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 120 })),
        fc.array(wakeArb, { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer(),
        (zone, from, to, perMinute, wakes, startDay, seed) => {
          const pace: Pace = { messagesPerMinute: perMinute, jitterSeconds: 0, quietHours: { from: hhmm(from), to: hhmm(to), timezone: zone } };
          expect(minutesOf(hhmm(to))).toBe(to);
          const fraction = fractions(seed);
          let now = T0 + startDay * 86_400_000;
          let wakeAt = now;
          let nextSlotAt: number | null = null;
          const sends: number[] = [];
          for (const wake of wakes) {
            now = wake.kind === 'jump' ? now + wake.ms : wake.kind === 'late' ? Math.max(now, wakeAt + wake.ms) : wake.kind === 'early' ? Math.max(now, wakeAt - wake.ms) : Math.max(now, wakeAt);
            const inWindow = sends.filter((t) => t > now - WINDOW_MS);
            const d = dueSends(pace, { nextSlotAt, sentInWindow: inWindow.length, oldestInWindow: inWindow.length ? Math.min(...inWindow) : null }, now, fraction, intlZoneRules);
            const quiet = inQuietHours(from, Math.min(to, 1440), localMinute(zone, now));
            if (quiet) {
              expect(d.count).toBe(0);
              // Asleep until the quiet hours end: the next wake-up is outside them.
              expect(d.wakeAt).toBeGreaterThan(now);
              // (00:00–24:00 is quiet all day: the pacer only looks again a minute later.)
              if (from === 0 && to === 1440) expect(d.wakeAt).toBe(now + WINDOW_MS);
              else expect(inQuietHours(from, to, localMinute(zone, d.wakeAt))).toBe(false);
            } else if (perMinute === null) expect(d.count).toBe(MAX_BATCH);
            for (let i = 0; i < d.count; i++) sends.push(now);
            nextSlotAt = asStored(d.nextSlotAt);
            wakeAt = asStored(d.wakeAt);
          }
          if (perMinute !== null) expect(busiestWindow(sends)).toBeLessThanOrEqual(perMinute);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('pace null sends MAX_BATCH at once and looks again at once, whatever the state', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: T0 - 3_600_000, max: T0 + 3_600_000 })),
        fc.nat({ max: 10_000 }),
        fc.integer({ min: 0, max: 600 }),
        fc.integer(),
        (nextSlotAt, sentInWindow, jitterSeconds, seed) => {
          const d = dueSends({ messagesPerMinute: null, jitterSeconds, quietHours: null }, { nextSlotAt, sentInWindow, oldestInWindow: sentInWindow > 0 ? T0 - 1 : null }, T0, fractions(seed), intlZoneRules);
          expect(d).toEqual({ count: MAX_BATCH, nextSlotAt: T0, wakeAt: T0 });
        },
      ),
    );
  });
});

describe('busiestWindow', () => {
  test('is the most sends in any half-open 60 s window [t, t + 60 s), by brute force', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 400_000 }), { maxLength: 60 }), (times) => {
        let most = 0;
        for (const start of times) most = Math.max(most, times.filter((t) => t >= start && t < start + WINDOW_MS).length);
        expect(busiestWindow(times)).toBe(most);
        // Order does not matter, and it never mutates its input.
        const copy = [...times];
        expect(busiestWindow([...times].reverse())).toBe(most);
        expect(times).toEqual(copy);
      }),
    );
  });
});
