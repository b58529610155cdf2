import type { DriverConnection, DriverEvents } from '../../../core/connections/driver.ts';
import type { DeliveryStatus } from '../../../core/messaging/delivery-status.ts';
import type { WebhookPayload, WebhookStatus, WebhookValue } from './graph-types.ts';
import { toReceivedMessage, userJid } from './incoming.ts';

/**
 * Turns one verified webhook callback into driver events:
 * `entry[].changes[]` with `field: "messages"` carry `value.messages[]` (→ `events.message`)
 * and `value.statuses[]` (→ `events.receipt`); `field: "message_template_status_update"`
 * (→ `events.templateStatus`). Other fields (account updates, …) pass nothing.
 *
 * Spec 5.6: "`metadata.phone_number_id` is cross-checked only when present". A change for
 * another phone number emits nothing; the call answers false when the payload held changes
 * for other numbers and none for this one.
 */
export async function ingestWebhook(connection: DriverConnection, payload: unknown, events: DriverEvents): Promise<boolean> {
  if (!isObject(payload)) return false;
  const webhook = payload as WebhookPayload;
  if (webhook.object !== undefined && webhook.object !== 'whatsapp_business_account') return false;
  if (!Array.isArray(webhook.entry)) return false;

  const ownNumber = connection.credentials.phoneNumberId;
  let ours = 0;
  let foreign = 0;
  for (const entry of webhook.entry) {
    if (!isObject(entry) || !Array.isArray(entry.changes)) continue;
    for (const change of entry.changes) {
      if (!isObject(change) || !isObject(change.value)) continue;
      if (change.field === 'message_template_status_update') {
        // Templates belong to the business account (`entry.id`), not to a number.
        const account = connection.credentials.businessAccountId;
        if (entry.id !== undefined && account && String(entry.id) !== account) foreign += 1;
        else if (await ingestTemplateStatus(change.value, events)) ours += 1;
        continue;
      }
      if (change.field !== undefined && change.field !== 'messages') continue;
      const value = change.value as WebhookValue;
      const numberId = value.metadata?.phone_number_id;
      if (numberId !== undefined && numberId !== null && String(numberId) !== ownNumber) {
        foreign += 1;
        continue;
      }
      ours += 1;
      await ingestValue(value, events);
    }
  }
  return !(foreign > 0 && ours === 0);
}

async function ingestValue(value: WebhookValue, events: DriverEvents): Promise<void> {
  const contacts = Array.isArray(value.contacts) ? value.contacts : [];
  const messages = (Array.isArray(value.messages) ? value.messages : []).filter(
    (message) => isObject(message) && typeof message.id === 'string' && typeof message.from === 'string',
  );
  // Handed over together, in order: the service stores the callback's messages in one batch.
  await Promise.all(
    messages.map((message) => {
      const contact = contacts.find((c) => c?.wa_id === message.from) ?? (contacts.length === 1 ? contacts[0] : undefined);
      return events.message(toReceivedMessage(message, contact?.profile?.name ?? ''));
    }),
  );
  for (const status of Array.isArray(value.statuses) ? value.statuses : []) {
    if (!isObject(status) || typeof status.id !== 'string') continue;
    const receipt = toReceipt(status);
    if (receipt) await events.receipt(receipt);
  }
}

/** `{ event, message_template_id, message_template_name, message_template_language, reason }`. */
async function ingestTemplateStatus(value: Record<string, any>, events: DriverEvents): Promise<boolean> {
  const id = value.message_template_id;
  if ((typeof id !== 'number' && typeof id !== 'string') || typeof value.event !== 'string') return false;
  await events.templateStatus?.({
    externalId: String(id),
    event: value.event,
    reason: typeof value.reason === 'string' ? value.reason : null,
    ...(typeof value.message_template_name === 'string' && { name: value.message_template_name }),
    ...(typeof value.message_template_language === 'string' && { language: value.message_template_language }),
  });
  return true;
}

const STATUS_MAP: Record<string, DeliveryStatus> = {
  sent: 'SENT',
  delivered: 'DELIVERED',
  read: 'READ',
  // A voice message was played: it was read too.
  played: 'READ',
  failed: 'FAILED',
};

type Receipt = Parameters<DriverEvents['receipt']>[0];

/** Spec 6.1: "failures appear in `statuses[].errors` (code `131047` means the 24-hour window is closed)". */
function toReceipt(status: WebhookStatus): Receipt | undefined {
  const mapped = STATUS_MAP[status.status];
  if (!mapped) return undefined;
  const receipt: Receipt = {
    externalId: status.id,
    remoteJid: status.recipient_id ? userJid(status.recipient_id) : '',
    status: mapped,
  };
  // Our message id, sent as `biz_opaque_callback_data` (outgoing.ts), handed back by the platform.
  const opaque = status.biz_opaque_callback_data;
  if (typeof opaque === 'string' && opaque) receipt.clientMessageId = opaque;
  const error = Array.isArray(status.errors) ? status.errors[0] : undefined;
  if (error && (error.code !== undefined || error.title || error.message)) {
    receipt.error = { code: error.code ?? 'UNKNOWN', title: error.title ?? error.message ?? error.error_data?.details ?? 'Message failed' };
  }
  return receipt;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
