/**
 * The shapes of the network's business Cloud API (Graph API) that this driver reads and
 * writes. Only the fields the driver uses are typed; everything else is passed through.
 *
 * References (Cloud API documentation):
 * - Send: `POST /{version}/{phone-number-id}/messages` →
 *   `{ messaging_product, contacts: [{ input, wa_id }], messages: [{ id, message_status? }] }`
 * - Upload: `POST /{version}/{phone-number-id}/media` (multipart: file, type, messaging_product) → `{ id }`
 * - Media URL: `GET /{version}/{media-id}` → `{ messaging_product, url, mime_type, sha256, file_size, id }`
 * - Errors: `{ error: { message, type, code, error_subcode?, error_data?: { messaging_product, details }, fbtrace_id } }`
 * - Webhook: `{ object: 'whatsapp_business_account', entry: [{ id, changes: [{ field, value }] }] }`
 */

export interface GraphErrorBody {
  error: {
    message?: string;
    type?: string;
    code?: number;
    error_subcode?: number;
    error_data?: { messaging_product?: string; details?: string };
    fbtrace_id?: string;
  };
}

export interface GraphSendResponse {
  messaging_product: 'whatsapp';
  contacts?: Array<{ input: string; wa_id: string }>;
  messages: Array<{ id: string; message_status?: string }>;
}

export interface GraphMediaInfo {
  messaging_product?: string;
  url: string;
  mime_type: string;
  sha256?: string;
  file_size?: number;
  id: string;
}

export interface GraphPhoneNumber {
  id: string;
  display_phone_number?: string;
  verified_name?: string;
}

/** A media object of an incoming message (image, video, audio, document, sticker). */
export interface WebhookMedia {
  id?: string;
  mime_type?: string;
  sha256?: string;
  url?: string;
  caption?: string;
  filename?: string;
  /** audio: true when recorded in the app as a voice message. */
  voice?: boolean;
  /** sticker: animated or not. */
  animated?: boolean;
}

export interface WebhookContactCard {
  name?: { formatted_name?: string; first_name?: string; last_name?: string; middle_name?: string; suffix?: string; prefix?: string };
  phones?: Array<{ phone?: string; wa_id?: string; type?: string }>;
  emails?: Array<{ email?: string; type?: string }>;
  org?: { company?: string; department?: string; title?: string };
  urls?: Array<{ url?: string; type?: string }>;
  addresses?: Array<{ street?: string; city?: string; state?: string; zip?: string; country?: string; country_code?: string; type?: string }>;
  birthday?: string;
}

export interface WebhookMessage {
  from: string;
  id: string;
  timestamp: string;
  type: string;
  context?: { from?: string; id?: string; forwarded?: boolean; frequently_forwarded?: boolean };
  text?: { body?: string };
  image?: WebhookMedia;
  video?: WebhookMedia;
  audio?: WebhookMedia;
  document?: WebhookMedia;
  sticker?: WebhookMedia;
  location?: { latitude?: number; longitude?: number; name?: string; address?: string; url?: string };
  contacts?: WebhookContactCard[];
  interactive?: {
    type?: string;
    button_reply?: { id?: string; title?: string };
    list_reply?: { id?: string; title?: string; description?: string };
    nfm_reply?: { name?: string; body?: string; response_json?: string };
  };
  button?: { payload?: string; text?: string };
  reaction?: { message_id?: string; emoji?: string };
  errors?: unknown[];
  [other: string]: unknown;
}

export interface WebhookStatus {
  id: string;
  status: string;
  timestamp?: string;
  recipient_id?: string;
  /** The `biz_opaque_callback_data` the send carried, handed back unchanged. */
  biz_opaque_callback_data?: string;
  errors?: Array<{ code?: number; title?: string; message?: string; error_data?: { details?: string }; href?: string }>;
  [other: string]: unknown;
}

export interface WebhookValue {
  messaging_product?: string;
  metadata?: { display_phone_number?: string; phone_number_id?: string };
  contacts?: Array<{ profile?: { name?: string }; wa_id?: string }>;
  messages?: WebhookMessage[];
  statuses?: WebhookStatus[];
  errors?: unknown[];
}

export interface WebhookPayload {
  object?: string;
  entry?: Array<{ id?: string; changes?: Array<{ field?: string; value?: WebhookValue }> }>;
}
