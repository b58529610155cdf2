/**
 * `requests` calls by `callers` callers each working at its own pace: a caller's calls are
 * scheduled ahead as a Poisson process of `perSecond` calls a second, and each goes out at its
 * time whether or not the caller's previous answer came back (an open loop: a slow answer delays
 * no later call, so it cannot hide the wait it causes). Latency is from the call's scheduled time.
 */
export async function pacedLoop(
  requests: number,
  callers: number,
  perSecond: number,
  call: (i: number) => Promise<Response>,
  failed: (response: Response) => boolean,
): Promise<{ latencies: number[]; failures: number; seconds: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const clock = Array.from({ length: callers }, () => 0);
  const calls: Promise<void>[] = [];
  for (let i = 0; i < requests; i++) {
    const caller = i % callers;
    // Exponential gaps: the caller's next call after a random think time of mean 1 / perSecond.
    clock[caller]! += (-Math.log(1 - Math.random()) / perSecond) * 1000;
    const at = started + clock[caller]!;
    calls.push(
      (async () => {
        await Bun.sleep(Math.max(0, at - performance.now()));
        const response = await call(i);
        await response.arrayBuffer();
        if (failed(response)) failures += 1;
        latencies.push(performance.now() - at);
      })(),
    );
  }
  await Promise.all(calls);
  latencies.sort((a, b) => a - b);
  return { latencies, failures, seconds: (performance.now() - started) / 1000 };
}
