/**
 * Helpdesk message delivery status (spec 2.12 and 3.2).
 *
 * Spec 3.2: "(created by REST send) | send call | always | `PENDING`" and "`PENDING` | delivery
 * outcome | asynchronous | `SENT`, `DELIVERED`, `READ` or `FAILED` | Emits
 * `helpdesk.message.status_changed` with `messageId`, `toStatus`, `externalError` (set on
 * `FAILED`)". "Moves among `SENT`, `DELIVERED`, `READ` beyond this are not stated": ours are
 * forward only, and outcomes may arrive late or out of order.
 *
 * | from \ outcome | SENT   | DELIVERED | READ   | FAILED  |
 * |----------------|--------|-----------|--------|---------|
 * | PENDING        | SENT   | DELIVERED | READ   | FAILED  |
 * | SENT           | ignore | DELIVERED | READ   | FAILED  |
 * | DELIVERED      | ignore | ignore    | READ   | ignore  |
 * | READ           | ignore | ignore    | ignore | ignore  |
 * | FAILED         | ignore | ignore    | ignore | ignore  |   (terminal)
 *
 * "ignore" is not an error: the status stays, `changed: false`. A message that reached the
 * phone (DELIVERED, READ) can no longer fail; FAILED never moves again. `externalError` is set
 * exactly when the status is FAILED.
 */
export const MESSAGE_STATUSES = ['PENDING', 'SENT', 'DELIVERED', 'READ', 'FAILED'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** What the network (or the API channel) reported. */
export type DeliveryOutcomeStatus = Exclude<MessageStatus, 'PENDING'>;
export const DELIVERY_OUTCOMES: readonly DeliveryOutcomeStatus[] = ['SENT', 'DELIVERED', 'READ', 'FAILED'];

export interface DeliveryOutcome {
  status: DeliveryOutcomeStatus;
  /** The provider's explanation; used only with FAILED. */
  externalError?: string | null;
}

export interface MessageDeliveryState {
  status: MessageStatus;
  externalError: string | null;
}

export interface MessageDeliveryChange extends MessageDeliveryState {
  /** The status moved (emit `helpdesk.message.status_changed`). */
  changed: boolean;
}

/** The transition table: for each status, the outcomes that move it (others are ignored). */
export const MESSAGE_STATUS_TRANSITIONS: Readonly<Record<MessageStatus, readonly DeliveryOutcomeStatus[]>> = {
  PENDING: ['SENT', 'DELIVERED', 'READ', 'FAILED'],
  SENT: ['DELIVERED', 'READ', 'FAILED'],
  DELIVERED: ['READ'],
  READ: [],
  FAILED: [],
};

/** The explanation stored when a FAILED outcome carries none. */
export const UNKNOWN_EXTERNAL_ERROR = 'Delivery failed (no reason given by the provider)';

export function isTerminal(status: MessageStatus): boolean {
  return MESSAGE_STATUS_TRANSITIONS[status].length === 0;
}

/** The message after a delivery outcome; a late, repeated or backward outcome changes nothing. */
export function applyDeliveryOutcome(current: MessageDeliveryState, outcome: DeliveryOutcome): MessageDeliveryChange {
  if (!MESSAGE_STATUS_TRANSITIONS[current.status].includes(outcome.status)) {
    return { status: current.status, externalError: current.status === 'FAILED' ? current.externalError ?? UNKNOWN_EXTERNAL_ERROR : null, changed: false };
  }
  const reason = outcome.externalError?.trim();
  return {
    status: outcome.status,
    externalError: outcome.status === 'FAILED' ? (reason ? reason : UNKNOWN_EXTERNAL_ERROR) : null,
    changed: true,
  };
}
