import type { TransitionTable } from '../shared/transition-table.ts';

/**
 * A send's journey to the network, recorded per message (the message row is the send queue).
 * The API sees a PENDING message throughout; this record says where its send stands, so that
 * after a crash only the sends that were on the wire at that instant are in doubt, and those
 * are never sent again blindly.
 *
 * queued       accepted, waiting for a worker (or for its retry time)
 * claimed      a worker holds it under a lease; not on the wire yet
 * in_flight    marked just before the network call: from here the network may have it
 * in_doubt     its worker vanished (lease lapsed) or the call went unanswered while in flight:
 *              waits for the network's own evidence, never resent
 * unconfirmed  no evidence came within the grace: FAILED to the API with reason
 *              `send_in_doubt`, still open to late evidence (which records it as sent)
 * sent         the worker recorded the network's answer
 * settled      recorded from the network's evidence (a status callback carrying our id, or our
 *              own echo), whichever state it was in
 * failed       the network refused it (permanently, or on the last retry), or it could not go
 */
export const SEND_STATES = ['queued', 'claimed', 'in_flight', 'in_doubt', 'unconfirmed', 'sent', 'settled', 'failed'] as const;
export type SendState = (typeof SEND_STATES)[number];

/** The states in which the message row is in the send queue (its `send_state` column). */
export const QUEUED_SEND_STATES = ['queued', 'claimed', 'in_flight', 'in_doubt'] as const satisfies readonly SendState[];
export type QueuedSendState = (typeof QUEUED_SEND_STATES)[number];

/**
 * claim       a worker takes it under a lease
 * start       marked in flight, right before the network call
 * took        the network answered with its id
 * retry       the network answered "not now" (or the session is held elsewhere): back in the queue
 * refuse      the network refused it for good, the last retry failed, or it cannot go at all
 * unanswered  the call ended without an answer (timeout, reset): the network may have it
 * lapse       its worker's lease ran out (the worker died or stalled)
 * release     its worker gives it back before sending (stopping, session held elsewhere)
 * evidence    the network shows it took it
 * give_up     no evidence within the grace
 * resend      no evidence within the grace, on a network that recognises a repeat by our id
 *             (`idempotentSends`): sending it again cannot make a second message
 */
export const SEND_EVENTS = ['claim', 'start', 'took', 'retry', 'refuse', 'unanswered', 'lapse', 'release', 'evidence', 'give_up', 'resend'] as const;
export type SendEvent = (typeof SEND_EVENTS)[number];

/**
 * The record's transitions. The queue's statements (adapters/postgres/repositories/send-queue.ts)
 * move rows only along it, each guarded by the state it leaves; the property test
 * (tests/property/send-record.test.ts) checks every observed move against this table.
 */
export const SEND_TRANSITIONS: TransitionTable<SendState, SendEvent> = {
  queued: { claim: 'claimed', evidence: 'settled', refuse: 'failed' },
  claimed: { start: 'in_flight', lapse: 'queued', release: 'queued', retry: 'queued', refuse: 'failed', evidence: 'settled' },
  in_flight: { took: 'sent', retry: 'queued', refuse: 'failed', unanswered: 'in_doubt', lapse: 'in_doubt', evidence: 'settled' },
  in_doubt: { evidence: 'settled', give_up: 'unconfirmed', resend: 'queued' },
  unconfirmed: { evidence: 'settled' },
  sent: {},
  settled: {},
  failed: {},
};

/** How long a worker's claim lasts without renewal: a dead worker's sends are taken over after this. */
export const SEND_LEASE_SECONDS = 12;
/** How often a worker renews the leases of the sends it holds. */
export const SEND_LEASE_RENEWAL_SECONDS = 4;
/** How long an in-doubt send waits for the network's evidence before it is given up (FAILED, `send_in_doubt`). */
export const IN_DOUBT_GRACE_SECONDS = 20;
/** Retries of a send the network answered "not now" (with backoff), before it fails. */
export const SEND_RETRY_LIMIT = 4;
/** Times a send may be handed on by workers that do not hold its session (about a minute). */
export const MAX_SESSION_HOPS = 60;

/** The error of a send given up in doubt. */
export const IN_DOUBT_ERROR = {
  code: 'send_in_doubt',
  title:
    'The worker sending this message stopped while it was on its way to the network, and the network has not confirmed it. ' +
    'It was not sent again, so that it is never sent twice; check the chat before sending it again.',
} as const;

/** Seconds before retry `attempt` (1-based): 2, 4, 8, 16. */
export function retryDelaySeconds(attempt: number): number {
  return 2 ** Math.min(attempt, 10);
}
