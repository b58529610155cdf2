import type { Timers } from '../../adapters/drivers/baileys/lease.ts';

/** Timers that fire only when a test says so: what is pending, and after how long it would run. */
export class ManualTimers implements Timers {
  readonly pending = new Map<number, { callback: () => void; ms: number }>();
  private next = 1;
  setTimeout(callback: () => void, ms: number) {
    const handle = this.next++;
    this.pending.set(handle, { callback, ms });
    return handle;
  }
  clearTimeout(handle: unknown) {
    this.pending.delete(handle as number);
  }
  delays() {
    return [...this.pending.values()].map((p) => p.ms);
  }
}
