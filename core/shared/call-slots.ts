/** At most `limit` calls at once per key; the others wait their turn, first come first served. */
export class CallSlots {
  private readonly busy = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();
  constructor(private readonly limit: number) {}

  async acquire(key: string): Promise<() => void> {
    if ((this.busy.get(key) ?? 0) >= this.limit) await new Promise<void>((resolve) => this.waiting.set(key, [...(this.waiting.get(key) ?? []), resolve]));
    else this.busy.set(key, (this.busy.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.get(key)?.shift();
      // The slot passes straight to the next waiter; otherwise it is freed.
      if (next) next();
      else this.busy.set(key, this.busy.get(key)! - 1);
    };
  }
}
