import {
  DriverError,
  MEDIA_GONE,
  type DriverCapabilities,
  type DriverConnection,
  type DriverEvents,
  type NetworkDriver,
  type OutgoingMedia,
  type SendResult,
} from '../../../core/connections/driver.ts';
import { isMediaKind, type OutgoingMessage } from '../../../core/messaging/outgoing.ts';
import { confirmNumberOwnership, prepareCloudApiCredentials, readCredentials } from './credentials.ts';
import { GraphClient, type FetchLike } from './graph-client.ts';
import { ingestWebhook } from './ingest.ts';
import { mediaSourceOf, toGraphBody, type MediaRef } from './outgoing.ts';
import { isAuthentic, verifyHandshake } from './signature.ts';
import { createCloudApiTemplates } from './templates.ts';

/**
 * The `cloud-api` driver (official): the network's business Cloud API over HTTPS with the
 * customer's own credentials (ARCHITECTURE.md, "Network drivers"). There is no session to
 * keep: "connecting" checks the credentials, sending is one HTTPS call, and everything that
 * happens on the network arrives as signed callbacks at `/v3/webhooks/whatsapp/{connectionId}`
 * (spec 4.5), handled by `callbacks`.
 */
export interface CloudApiDriverOptions {
  /** `https://graph.facebook.com` in production; the Graph simulator in tests. */
  baseUrl: string;
  /** Graph API version, default `v23.0`. */
  apiVersion?: string;
  fetch?: FetchLike;
  /** Per request, default 30 s; a request that takes longer fails as retryable. */
  timeoutMs?: number;
}

export const CLOUD_API_CAPABILITIES: DriverCapabilities = {
  official: true,
  // Spec 3.4: free text only within 24 h of the contact's last message; templates always.
  sendWindow: true,
  templates: true,
  carousels: true,
  flows: true,
  // Marking a received message as read can show "typing…" for up to 25 s (see sendTyping).
  typing: true,
  pairing: 'credentials',
};

export const DEFAULT_API_VERSION = 'v23.0';

export function createCloudApiDriver(options: CloudApiDriverOptions): NetworkDriver {
  const clientOptions = {
    baseUrl: options.baseUrl,
    apiVersion: options.apiVersion ?? DEFAULT_API_VERSION,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: options.timeoutMs ?? 30_000,
  } satisfies ConstructorParameters<typeof GraphClient>[0];
  const clientFor = (connection: DriverConnection) => new GraphClient(clientOptions, readCredentials(connection));

  return {
    name: 'cloud-api',
    capabilities: CLOUD_API_CAPABILITIES,

    prepareCredentials: prepareCloudApiCredentials,

    templates: createCloudApiTemplates(clientOptions),

    confirmCredentials: (credentials) => confirmNumberOwnership(new GraphClient(clientOptions, readCredentials({ credentials })), credentials.phoneNumberId ?? ''),

    /**
     * No QR for an official number: `GET /{phone-number-id}` proves the token and the id.
     * Rejected credentials (190 invalid token, an unknown number, missing permission) end as
     * `loggedOut` with the platform's reason. A transient failure (network, 5xx, throttling)
     * reports `dropped` and throws the retryable `DriverError`, so the caller tries again.
     */
    async connect(connection, events) {
      let client: GraphClient;
      try {
        client = clientFor(connection);
      } catch (error) {
        if (error instanceof DriverError) return events.status({ event: 'loggedOut', reason: error.message });
        throw error;
      }
      try {
        const number = await client.phoneNumber();
        const digits = number.display_phone_number?.replace(/[^\d]/g, '');
        await events.status(digits ? { event: 'opened', phoneNumber: digits } : { event: 'opened' });
      } catch (error) {
        if (!(error instanceof DriverError)) throw error;
        if (error.retryable) {
          await events.status({ event: 'dropped', reason: error.message });
          throw error;
        }
        await events.status({ event: 'loggedOut', reason: error.message });
      }
    },

    /** Nothing to close: the Cloud API keeps no session, and the credentials stay the customer's. */
    async disconnect() {},

    async send(connection: DriverConnection, message: OutgoingMessage, media?: OutgoingMedia): Promise<SendResult> {
      const client = clientFor(connection);
      let ref: MediaRef | undefined;
      if (isMediaKind(message.content.kind)) {
        const source = mediaSourceOf(message.content, media);
        if ('upload' in source) {
          // Bytes are uploaded first (`POST /{phone-number-id}/media`) and sent by id.
          const { bytes, mimetype, fileName } = source.upload;
          ref = { id: await client.uploadMedia(bytes!, mimetype, fileName) };
        } else {
          ref = source.ref;
        }
      }
      const answer = await client.sendMessage(toGraphBody(message, ref, media?.fileName));
      const externalId = answer.messages?.[0]?.id;
      // A 2xx without an id may still have sent the message: in doubt, never retried.
      if (!externalId) throw new DriverError('Sending the message failed: the answer has no message id', 'BAD_RESPONSE', false, true);
      // Accepted is not delivered (spec 4.3: "201 means the platform accepted the call");
      // sent / delivered / read / failed arrive later as `statuses[]` callbacks.
      return { externalId };
    },

    /** A Graph call with the connection's token (Flows, the Flow encryption key, templates). */
    platformRequest: (connection, request) => clientFor(connection).call(request),

    /** `ref` is the Cloud API media id of a received message: `GET /{media-id}`, then its URL with the token. */
    async fetchMedia(connection, ref) {
      const client = clientFor(connection);
      try {
        const info = await client.mediaInfo(ref);
        if (!info.url) throw new DriverError(`Reading media ${ref} failed: the answer has no url`, 'BAD_RESPONSE', true);
        const { bytes, contentType } = await client.download(info.url);
        return { bytes, mimetype: info.mime_type || contentType || 'application/octet-stream' };
      } catch (error) {
        // The platform keeps received media about 30 days: an unknown id (code 100, "does not
        // exist") or a media URL answering 404/410 means it is gone, not that the platform failed.
        if (error instanceof DriverError && (error.code === 100 || error.code === 'HTTP_404' || error.code === 'HTTP_410')) {
          throw new DriverError(error.message, MEDIA_GONE, false);
        }
        throw error;
      }
    },

    /**
     * The Cloud API shows "typing…" only by marking a received message as read with
     * `typing_indicator: { type: "text" }`; it needs that message's id, it also marks the
     * message read, and it clears by itself when the business answers or after 25 seconds.
     * So without `lastContactMessageId`, or with `typing: false` (there is no call to clear it),
     * nothing is sent.
     */
    async sendTyping(connection, _to, typing, lastContactMessageId) {
      const messageId = lastContactMessageId?.trim();
      if (!typing || !messageId) return;
      await clientFor(connection).markRead({
        messaging_product: 'whatsapp',
        status: 'read',
        message_id: messageId,
        typing_indicator: { type: 'text' },
      });
    },

    callbacks: {
      verify: verifyHandshake,
      authentic: isAuthentic,
      ingest: (connection: DriverConnection, payload: unknown, events: DriverEvents) => ingestWebhook(connection, payload, events),
    },
  };
}
