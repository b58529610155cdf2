import { describe, expect, test } from 'bun:test';
import { slowestCallWindows, type Timed } from '../../bench/closed-loop.ts';

// bench:send prints where each run's slowest 1 % of requests started (docs/benchmarks.md): the
// figure that tells a stall of the whole machine from requests slow on their own.
describe('slowestCallWindows', () => {
  const calls = (n: number, at: (i: number) => number, ms: (i: number) => number): Timed[] => Array.from({ length: n }, (_, i) => ({ at: at(i), ms: ms(i) }));

  test('a stall: the slowest 1 % all started in one window', () => {
    // 1,000 calls over 2 s, 10 ms each, but the ten that started at 1,000–1,018 ms took 70–80 ms.
    const timeline = calls(1000, (i) => i * 2, (i) => (i >= 500 && i < 505 ? 80 : i >= 505 && i < 510 ? 70 : 10));
    expect(slowestCallWindows(timeline)).toEqual({ slowest: 10, windows: 1, of: 10 });
  });

  test('slow calls spread over the run: as many windows as calls', () => {
    // Every hundredth call is slow: one in each 200 ms window.
    const timeline = calls(1000, (i) => i * 2, (i) => (i % 100 === 50 ? 90 : 10));
    expect(slowestCallWindows(timeline)).toEqual({ slowest: 10, windows: 10, of: 10 });
  });

  test('the windows are counted from the first call to the last start, in the order calls finished', () => {
    const timeline: Timed[] = [
      { at: 450, ms: 5 },
      { at: 0, ms: 40 },
      { at: 10, ms: 1 },
    ];
    expect(slowestCallWindows(timeline, 100)).toEqual({ slowest: 1, windows: 1, of: 5 });
  });
});
