import type { Clock } from '../../core/shared/ports.ts';

/** A service's clock that runs with real time and that a test moves forward (expiry tests). */
export class MovableClock implements Clock {
  private offset = 0;
  now() {
    return new Date(Date.now() + this.offset);
  }
  advance(ms: number) {
    this.offset += ms;
  }
}
