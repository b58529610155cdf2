/**
 * The batching window of spec 6.3: with `messageGroupDelay` a contact's messages are held in a
 * sliding window per (webhook, connection, contact) and delivered as one request whose `data` is
 * an array in `messageTimestamp` order. Each message arriving while the window is open pushes
 * its end to `arrival + delay`; the batch goes out when the window ends with nothing new.
 */
export interface BatchWindow {
  /** When the batch goes out unless another message arrives first. */
  closesAt: Date;
  /** Bumped by every arrival, so only the newest scheduled flush delivers the batch. */
  version: number;
}

export function openOrSlide(window: BatchWindow | undefined, arrival: Date, delaySeconds: number): BatchWindow {
  const closesAt = new Date(arrival.getTime() + delaySeconds * 1000);
  if (!window) return { closesAt, version: 1 };
  return { closesAt: closesAt > window.closesAt ? closesAt : window.closesAt, version: window.version + 1 };
}

/** Whether a flush scheduled for `version` should deliver now. */
export function dueForFlush(window: BatchWindow, version: number, now: Date): boolean {
  return window.version === version && now.getTime() >= window.closesAt.getTime();
}

/** The batch's messages in `messageTimestamp` order; ties keep their arrival order. */
export function orderBatch<T extends { messageTimestamp: number }>(items: T[]): T[] {
  return items.map((item, i) => ({ item, i })).sort((a, b) => a.item.messageTimestamp - b.item.messageTimestamp || a.i - b.i).map(({ item }) => item);
}
