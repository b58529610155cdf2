/**
 * A step run over and over: at once again while it reports a full batch, soon after it found
 * some work, and ever more rarely (up to `maxMs`) while it finds none; `wake()` runs it at once
 * (work made in this process). The back-off keeps an idle service nearly silent while a busy
 * one is polled every few milliseconds.
 */
export type StepResult = 'full' | 'some' | 'none';

export class PollingLoop {
  private stopped = false;
  private delayMs: number;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly name: string,
    private readonly step: () => Promise<StepResult>,
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {
    this.delayMs = minMs;
  }

  start(): this {
    this.running ??= this.run();
    return this;
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
    while (!this.stopped) {
      this.woken = false;
      let result: StepResult;
      try {
        result = await this.step();
      } catch (error) {
        console.error(`[${this.name}] ${error instanceof Error ? error.message : String(error)}`);
        this.delayMs = this.maxMs;
        result = 'none';
      }
      if (result === 'full' || this.woken) continue;
      this.delayMs = result === 'some' ? this.minMs : Math.min(this.maxMs, Math.max(this.minMs, this.delayMs * 1.25));
      await this.sleep(this.delayMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = undefined;
        resolve();
      }
      this.wakeUp = done;
    });
  }
}
