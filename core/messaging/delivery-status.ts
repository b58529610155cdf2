import { DomainError } from '../shared/errors.ts';

/**
 * Status of an outgoing message. It is accepted as PENDING, and moves forward only: receipts
 * may arrive out of order (READ before DELIVERED) and late ones are ignored, never applied
 * backwards. FAILED is reachable until the message is delivered.
 */
export const DELIVERY_STATUSES = ['PENDING', 'SENT', 'DELIVERED', 'READ', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DELIVERY_TRANSITIONS: Record<DeliveryStatus, readonly DeliveryStatus[]> = {
  PENDING: ['SENT', 'DELIVERED', 'READ', 'FAILED'],
  SENT: ['DELIVERED', 'READ', 'FAILED'],
  DELIVERED: ['READ'],
  READ: [],
  FAILED: [],
};

/** The status after a receipt, or the same status when the receipt is stale or repeated. */
export function applyReceipt(current: DeliveryStatus, receipt: DeliveryStatus): DeliveryStatus {
  return DELIVERY_TRANSITIONS[current].includes(receipt) ? receipt : current;
}

export function assertDeliveryStatus(value: string): DeliveryStatus {
  if ((DELIVERY_STATUSES as readonly string[]).includes(value)) return value as DeliveryStatus;
  throw new DomainError('invalid_input', `status must be one of ${DELIVERY_STATUSES.join(', ')}`);
}
