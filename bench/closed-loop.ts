/**
 * `requests` calls by `concurrency` callers in a closed loop (each caller waits for its answer
 * before making the next call), timed one by one. `failed` says which answers count as failures.
 */
export async function closedLoop(
  requests: number,
  concurrency: number,
  call: (i: number) => Promise<Response>,
  failed: (response: Response) => boolean,
): Promise<{ latencies: number[]; timeline: Timed[]; failures: number; started: number; seconds: number }> {
  const latencies: number[] = [];
  const timeline: Timed[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        const i = next++;
        const t0 = performance.now();
        const response = await call(i);
        await response.arrayBuffer();
        if (failed(response)) failures += 1;
        const ms = performance.now() - t0;
        latencies.push(ms);
        timeline.push({ at: t0 - started, ms });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { latencies, timeline, failures, started, seconds };
}

/** A call of the loop: when it started (ms after the first) and how long it took (ms). */
export interface Timed {
  at: number;
  ms: number;
}

/**
 * Where the slowest 1 % of the calls started, in windows of `windowMs`: in few windows, the tail
 * is stalls that held every call in flight at once (a collection pause, the machine's own), not
 * calls slow on their own, which would be spread over the run.
 */
export function slowestCallWindows(timeline: readonly Timed[], windowMs = 200): { slowest: number; windows: number; of: number } {
  const slowest = [...timeline].sort((a, b) => b.ms - a.ms).slice(0, Math.ceil(timeline.length / 100));
  const last = timeline.reduce((latest, call) => Math.max(latest, call.at), 0);
  return { slowest: slowest.length, windows: new Set(slowest.map((call) => Math.floor(call.at / windowMs))).size, of: Math.floor(last / windowMs) + 1 };
}

/** The `p`th percentile of latencies sorted in ascending order, in ms with `digits` decimals. */
export function percentile(sorted: readonly number[], p: number, digits = 2): string {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(digits);
}

/** The median of figures from repeated runs (BENCH_RUNS): the middle one, or the mean of the two. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
