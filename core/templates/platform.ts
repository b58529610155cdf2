import type { DriverConnection } from '../connections/driver-connection.ts';
import type { TemplateStatus } from './template-status.ts';

/**
 * What a network with pre-approved templates offers (`NetworkDriver.templates`, present where
 * `capabilities.templates`). Failures are `DriverError`s.
 */
export interface TemplatePlatform {
  /** Submits a definition for review; the platform answers its id and (usually PENDING) status. */
  create(connection: DriverConnection, definition: TemplateDefinition): Promise<{ externalId: string; status: TemplateStatus; category: string | null }>;
  /** Every template of the connection's business account, as the platform has them now (deleted ones left out). */
  list(connection: DriverConnection): Promise<PlatformTemplate[]>;
  /** The platform's current view of one template, or undefined when it no longer exists. */
  get(connection: DriverConnection, externalId: string): Promise<PlatformTemplate | undefined>;
  /** Deletes one template (by name and id: only that language). */
  delete(connection: DriverConnection, template: { name: string; externalId: string }): Promise<void>;
  /** Uploads example media for a definition's header; answers a permanent handle (`example.header_handle`). */
  uploadHeaderMedia(connection: DriverConnection, file: UploadedFile): Promise<{ handle: string }>;
  /** Uploads media to send in a template (about 30 days, bound to the number); answers its media id. */
  uploadSendMedia(connection: DriverConnection, file: UploadedFile): Promise<{ mediaId: string }>;
}

export interface TemplateDefinition {
  name: string;
  language: string;
  category: string;
  components: unknown[];
}

export interface PlatformTemplate {
  externalId: string;
  name: string;
  language: string;
  category: string | null;
  /** Null for a status this service does not keep (`ARCHIVED`, `LIMIT_EXCEEDED`, a new one): the last known stays. */
  status: TemplateStatus | null;
  rejectedReason: string | null;
  components: unknown[] | null;
}

export interface UploadedFile {
  bytes: Uint8Array;
  mimetype: string;
  fileName: string;
}

/** A `message_template_status_update` as the driver reports it (`DriverEvents.templateStatus`). */
export interface TemplateStatusUpdate {
  externalId: string;
  name?: string;
  language?: string;
  /** The platform's event (`APPROVED`, `REJECTED`, `PAUSED`, `REINSTATED`, …). */
  event: string;
  reason?: string | null;
}
