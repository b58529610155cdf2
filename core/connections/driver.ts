import type { ConnectionEvent } from './connection-status.ts';
import type { DriverConnection } from './driver-connection.ts';
import type { DeliveryStatus } from '../messaging/delivery-status.ts';
import type { ReceivedMessage } from '../messaging/incoming.ts';
import type { OutgoingMessage } from '../messaging/outgoing.ts';
import type { TemplatePlatform, TemplateStatusUpdate } from '../templates/platform.ts';

/**
 * The port every chat network implements. A contributor adds a network with one folder under
 * `adapters/drivers/` exporting a `NetworkDriver`, registered in `adapters/drivers/index.ts`.
 * The core decides what to do with a driver's capabilities (refuse free text outside the
 * window, refuse a Flow, degrade a carousel); the driver only talks to its network.
 */
export interface DriverCapabilities {
  /** The network's business API with the customer's own credentials (paid plans only). */
  official: boolean;
  /** Free text only within 24 h of the contact's last message (spec 3.4). */
  sendWindow: boolean;
  templates: boolean;
  carousels: boolean;
  flows: boolean;
  /** Can show "typing…" to a contact. */
  typing: boolean;
  /** How a session is paired: at once (sandbox), by QR / pairing code, or by credentials. */
  pairing: 'instant' | 'qr' | 'credentials';
  /**
   * The network recognises a repeat of a send by our message id and never makes it a second
   * message: a send left in doubt by a crash may simply go again. False (the default) for
   * networks that would deliver it twice.
   */
  idempotentSends?: boolean;
}

/** The feature flags clients see of a connection (REST and MCP); all false for an unknown driver. */
export function capabilityFlags(capabilities: DriverCapabilities | undefined) {
  return {
    sendWindow: capabilities?.sendWindow ?? false,
    templates: capabilities?.templates ?? false,
    carousels: capabilities?.carousels ?? false,
    flows: capabilities?.flows ?? false,
    typing: capabilities?.typing ?? false,
  };
}

export type { DriverConnection } from './driver-connection.ts';

/** How a driver reports what happens on the network. The service stores, dedupes and publishes. */
export interface DriverEvents {
  status(update: { event: ConnectionEvent; qr?: string; pairingCode?: string; phoneNumber?: string; reason?: string }): Promise<void>;
  message(message: ReceivedMessage): Promise<void>;
  /**
   * A delivery status of a sent message. `messages.update` is built from these fields in one
   * shape for every network (core/messaging/status-update.ts). `clientMessageId` is our message
   * id when the network hands it back with the status (the Cloud API's `biz_opaque_callback_data`):
   * evidence that settles a send whose network id was never recorded (core/messaging/settle.ts).
   */
  receipt(update: { externalId: string; remoteJid: string; status: DeliveryStatus; error?: { code: number | string; title: string }; clientMessageId?: string }): Promise<void>;
  /** `presence.update`, `messages.edited`, `messages.delete`: provider data passed through (spec 6.1). */
  passthrough(event: 'presence.update' | 'messages.edited' | 'messages.delete', remoteJid: string, data: unknown): Promise<void>;
  /** A template's status changed on the platform (`message_template_status_update`). */
  templateStatus?(update: TemplateStatusUpdate): Promise<void>;
}

/**
 * Code of a `fetchMedia` failure meaning "the network no longer has this media" (expired,
 * deleted, never there): the download is 404. Any other failure there is the provider's (502).
 */
export const MEDIA_GONE = 'media_gone';

/** Code of a retryable failure meaning "another worker holds this session": try again elsewhere. */
export const SESSION_ELSEWHERE = 'session_elsewhere';

export interface SendResult {
  externalId: string;
  /** Status the network confirmed at once, if any (otherwise SENT). */
  status?: DeliveryStatus;
}

/**
 * A failure the network reported; `retryable` failures are retried by the queue. An `unanswered`
 * failure of a send is a call that may have reached the network without its answer reaching us
 * (a timeout, a connection reset after the request went out): that send is in doubt, and is
 * settled from the network's evidence instead of being sent again.
 */
export class DriverError extends Error {
  constructor(
    message: string,
    readonly code: number | string,
    readonly retryable: boolean,
    readonly unanswered = false,
  ) {
    super(message);
    this.name = 'DriverError';
  }
}

export interface NetworkDriver {
  readonly name: string;
  readonly capabilities: DriverCapabilities;
  /** Checks and completes a connection's settings at creation; throws a DomainError when unusable. */
  prepareCredentials?(input: Record<string, unknown>): Record<string, string>;
  /**
   * Official networks: asks the platform whether these credentials (as `prepareCredentials`
   * returned them) own the number they name, before the service claims it. Throws a
   * DomainError: 422 when the platform says no, 502 when it cannot be asked.
   */
  confirmCredentials?(credentials: Record<string, string>): Promise<void>;
  /** Opens (or resumes) the session; progress is reported through `events`. */
  connect(connection: DriverConnection, events: DriverEvents, options?: { pairingPhoneNumber?: string }): Promise<void>;
  /** Closes the session; with `logout` the pairing ends too. */
  disconnect(connection: DriverConnection, options: { logout: boolean }): Promise<void>;
  send(connection: DriverConnection, message: OutgoingMessage, media?: OutgoingMedia): Promise<SendResult>;
  /** The bytes of a received media item, by the reference the driver gave in `ReceivedMessage.media`. */
  fetchMedia(connection: DriverConnection, ref: string): Promise<{ bytes: Uint8Array; mimetype: string }>;
  /**
   * Official networks: one call to the platform's own API with the connection's credentials
   * (Flows, their encryption key, templates). `path` is relative to the versioned root
   * (`<waba-id>/flows`); answers the parsed JSON body; failures are `DriverError`s.
   */
  platformRequest?(connection: DriverConnection, request: PlatformRequest): Promise<unknown>;
  /** Pre-approved templates (spec 4.3), where `capabilities.templates`. */
  templates?: TemplatePlatform;
  /**
   * Is this number on the network? Where the network can tell (unofficial accounts, the
   * sandbox); the official network offers no lookup. `phone` is digits in international format.
   */
  lookupNumber?(connection: DriverConnection, phone: string): Promise<{ exists: boolean; jid: string | null }>;
  /**
   * Shows or clears "typing…" to a contact, where `capabilities.typing`. `lastContactMessageId`
   * is the network id of the contact's latest message in the chat, when known: a network that
   * shows typing only in answer to a message (the official one) needs it.
   */
  sendTyping?(connection: DriverConnection, to: string, typing: boolean, lastContactMessageId?: string): Promise<void>;
  /** Provider callbacks over HTTP (official networks): verification handshake and delivery. */
  callbacks?: ProviderCallbacks;
  /** Multi-device networks: taking over a pairing made elsewhere (the sync flow, spec 4.3). */
  sessionImport?: SessionImport;
  /** Closes this process's sessions and gives them up to other workers (at shutdown). */
  shutdown?(): Promise<void>;
}

/**
 * Session material handed over by a companion: the account's multi-device auth state (keys and
 * device identity) as another client holds it. `inspect` checks it without storing anything and
 * answers the normalized material with the account it belongs to, or throws a 400 DomainError
 * listing every problem; the service then stores it sealed, in the transaction that moves the
 * connection, and the driver opens its next session with it.
 */
export interface SessionImport {
  inspect(material: unknown): ImportedSession;
}

export interface ImportedSession {
  /** Digits of the account's own number, international format. */
  phoneNumber: string;
  /** The material as the driver will store it (normalized; never shown or logged). */
  material: unknown;
}

/** A raw platform call: a JSON body, or a multipart form (a file is a Blob with its file name). */
export interface PlatformRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  json?: Record<string, unknown>;
  form?: Record<string, string | { blob: Blob; fileName: string }>;
  /** What the call does, for error messages ("Creating the Flow"). */
  action: string;
}

/** Media to send, already resolved by the service (uploaded bytes or a public URL). */
export interface OutgoingMedia {
  bytes?: Uint8Array;
  url?: string;
  mimetype: string;
  fileName?: string;
}

export interface ProviderCallbacks {
  /** `GET` handshake: the challenge to echo, or undefined when the verify token is wrong. */
  verify(connection: DriverConnection, query: Record<string, string | undefined>): string | undefined;
  /** Checks the signature of a `POST` over its raw body; false answers 401 and nothing is stored. */
  authentic(connection: DriverConnection, rawBody: string, headers: Record<string, string | undefined>): boolean;
  /** Turns a verified callback into driver events; returns false when the payload is for another number. */
  ingest(connection: DriverConnection, payload: unknown, events: DriverEvents): Promise<boolean>;
}
