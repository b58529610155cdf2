import { errorField, log } from '../logging/logger.ts';

/**
 * A step run over and over: at once again while it reports a full batch, `gatherMs` after it
 * found some work (so a busy queue is taken in batches, not one item per transaction), and ever
 * more rarely (up to `maxMs`) while it finds none; `wake()` ends an idle wait at once (new work
 * announced). A wake does not cut the gather wait short: under a stream of announcements (one per
 * accepted batch) the step would otherwise run per announcement and take a few items each time.
 * The back-off keeps an idle service nearly silent.
 */
export type StepResult = 'full' | 'some' | 'none';

export class PollingLoop {
  private stopped = false;
  private delayMs: number;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private running: Promise<void> | undefined;
  private ended = false;

  constructor(
    private readonly name: string,
    private readonly step: () => Promise<StepResult>,
    private readonly gatherMs: number,
    private readonly maxMs: number,
  ) {
    this.delayMs = gatherMs;
  }

  start(): this {
    this.running ??= this.run();
    return this;
  }

  /** Started, not stopped, and its loop has not ended (readiness). */
  get isRunning(): boolean {
    return this.running !== undefined && !this.stopped && !this.ended;
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      await this.turns();
    } finally {
      this.ended = true;
    }
  }

  private async turns(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      let result: StepResult;
      try {
        result = await this.step();
      } catch (error) {
        log.error({ loop: this.name, error: errorField(error) }, 'loop step failed');
        this.delayMs = this.maxMs;
        result = 'none';
      }
      if (result === 'full') continue;
      if (result === 'some') {
        this.delayMs = this.gatherMs;
        await this.sleep(this.gatherMs, { wakeable: false });
        continue;
      }
      if (this.woken) continue;
      this.delayMs = Math.min(this.maxMs, Math.max(this.gatherMs, this.delayMs * 1.25));
      await this.sleep(this.delayMs, { wakeable: true });
    }
  }

  /** A gather wait (`wakeable: false`) still ends at once when the loop stops. */
  private sleep(ms: number, { wakeable }: { wakeable: boolean }): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = undefined;
        resolve();
      }
      this.wakeUp = wakeable ? done : () => self.stopped && done();
    });
  }
}
