import type { ChatMessage } from './message.ts';
import type { QueuedSendState } from './send-record.ts';

/** A send a worker holds: its PENDING message and how often it was tried or handed on before. */
export interface ClaimedSend {
  message: ChatMessage;
  /** Attempts the network answered "not now" so far. */
  attempts: number;
  /** Times workers not holding its session handed it on. */
  hops: number;
}

/** A send going back to the queue: when it may be claimed again, and its counters. */
export interface Requeued {
  id: string;
  dueAt: Date;
  attempts: number;
  hops: number;
}

/**
 * The send queue is the message rows (see send-record.ts for the states). Every write naming an
 * `owner` changes only the rows that owner still holds: a worker that stalled past its lease
 * and lost its sends to another cannot move them any more.
 * A message whose status leaves PENDING leaves the queue in that same write (MessageStore).
 */
export interface SendQueue {
  /**
   * One claim, one statement: sends due (queued and past their time, or claimed by a worker
   * whose lease lapsed: never on the wire) are claimed for `owner` until `leaseUntil`; in-flight
   * sends whose worker's lease lapsed become in doubt until `doubtUntil`; and in-doubt sends past
   * their grace are answered in `givenUp` (claimed by `owner` while it gives them up).
   */
  claimDue(owner: string, now: Date, leaseUntil: Date, doubtUntil: Date, limit: number): Promise<{ claimed: ClaimedSend[]; givenUp: string[] }>;
  /**
   * Marks claimed sends in flight (just before their network calls); answers the ids marked. A
   * send whose lease already lasts until `keepLeaseFrom` keeps it (the common case, right after
   * its claim or a renewal: the write then touches no index); any other gets `leaseUntil`.
   */
  start(owner: string, ids: readonly string[], leaseUntil: Date, keepLeaseFrom: Date): Promise<Set<string>>;
  /** Extends the lease of the sends `owner` holds (claimed or in flight); answers those still held. */
  renew(owner: string, ids: readonly string[], leaseUntil: Date): Promise<Set<string>>;
  /** Puts sends back in the queue after their call (a retry later, a hop to the worker holding the session). */
  requeue(owner: string, sends: readonly Requeued[]): Promise<void>;
  /** Gives back claimed sends that never started (a stopping worker): due at once, for any worker. */
  release(owner: string, ids: readonly string[], dueAt: Date): Promise<void>;
  /** In-doubt sends `owner` holds past their grace, back in the queue (their network recognises a repeat). */
  resend(owner: string, ids: readonly string[], dueAt: Date): Promise<void>;
  /** Where a message's send stands while it is in the queue (undefined once it left it). */
  stateOf(id: string): Promise<QueuedSendState | undefined>;
  /** In-flight sends whose calls went unanswered: in doubt until `until`, never resent. */
  doubt(owner: string, ids: readonly string[], until: Date): Promise<void>;
}
