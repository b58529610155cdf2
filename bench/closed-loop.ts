/**
 * `requests` calls by `concurrency` callers in a closed loop (each caller waits for its answer
 * before making the next call), timed one by one. `failed` says which answers count as failures.
 */
export async function closedLoop(
  requests: number,
  concurrency: number,
  call: (i: number) => Promise<Response>,
  failed: (response: Response) => boolean,
): Promise<{ latencies: number[]; failures: number; started: number; seconds: number }> {
  const latencies: number[] = [];
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
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { latencies, failures, started, seconds };
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
