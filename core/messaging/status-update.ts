import type { DeliveryStatus } from './delivery-status.ts';

/** One delivery status of `messages.update`, in the Cloud API's `statuses[]` words (spec 6.1). */
export interface StatusEntry {
  /** The network id of the message; the service's own id when it never reached the network. */
  id: string;
  status: Lowercase<DeliveryStatus>;
  /** Integer seconds since the epoch (spec 2.1). */
  timestamp: number;
  /** The other side: the contact's number (or the group id). */
  recipient_id: string;
  /** Only on `failed`: why (code `131047`: the 24-hour window is closed). */
  errors?: Array<{ code: number | string; title: string }>;
}

/** The `data` of every `messages.update`. */
export interface StatusUpdateData {
  key: { id: string; remoteJid: string; fromMe: true };
  statuses: [StatusEntry];
}

/**
 * Spec 6.1: "`messages.update` | a delivery status changed (sent, delivered, read); failures
 * appear in `statuses[].errors`". Every driver's status changes (a receipt, a send the network
 * took, a send that failed for good) are published in this one shape, built here, so a consumer
 * reads the same fields whatever the network: `statuses[0]` as the official API words it, and
 * `key` as in `messages.upsert` (spec 6.4 deduplicates on `data.key.id`).
 */
export function statusUpdateData(input: {
  messageId: string;
  remoteJid: string;
  status: DeliveryStatus;
  at: Date;
  error?: { code: number | string; title: string } | null;
}): StatusUpdateData {
  const entry: StatusEntry = {
    id: input.messageId,
    status: input.status.toLowerCase() as Lowercase<DeliveryStatus>,
    timestamp: Math.floor(input.at.getTime() / 1000),
    recipient_id: recipientOf(input.remoteJid),
  };
  if (input.status === 'FAILED') entry.errors = [input.error ? { code: input.error.code, title: input.error.title } : { code: 'UNKNOWN', title: 'The network reported the message as failed' }];
  return { key: { id: input.messageId, remoteJid: input.remoteJid, fromMe: true }, statuses: [entry] };
}

/** `5511999999999:3@s.whatsapp.net` → `5511999999999`; a group keeps its id. */
function recipientOf(remoteJid: string): string {
  return remoteJid.split('@')[0]!.split(':')[0]!;
}
