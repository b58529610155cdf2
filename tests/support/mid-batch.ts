import type { GraphSimulator } from './graph-simulator.ts';
import { waitFor } from './wait.ts';

/**
 * Waits for the moment a crash test kills its sender: a wave of sends the simulator has just
 * taken (5 more than now) and whose answers it still holds (`sendLatencyMs`, 150 ms in those
 * tests): 75 ms after the wave began, the rest of it is on the wire and no answer is back yet.
 */
export async function midBatch(sim: GraphSimulator, what = 'a batch on the wire'): Promise<void> {
  const seen = sim.sent.length;
  // The dead sender's sends come back when its lease lapses (12 s): on a loaded machine that may
  // be all the next one finds left to send.
  await waitFor(() => (sim.sent.length >= seen + 5 ? true : undefined), { what, timeout: 60_000, interval: 2 });
  await Bun.sleep(75);
}
