import type { RecordWrites } from '../shared/workspace-records.ts';
import type { ConnectionStatus } from './connection-status.ts';

export interface Connection {
  id: string;
  workspaceId: string;
  name: string;
  /** The network driver: `sandbox`, `cloud-api`, `baileys`, or a contributor's. */
  driver: string;
  status: ConnectionStatus;
  /** Driver settings (access token, app secret…), decrypted; never shown whole to clients. */
  credentials: Record<string, string>;
  phoneNumber: string | null;
  qr: string | null;
  pairingCode: string | null;
  statusReason: string | null;
  /** How provider callbacks are matched to the connection (the phone number id on official ones). */
  routingKey: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ConnectionStore extends RecordWrites<Connection> {
  get(workspaceId: string, id: string): Promise<Connection | undefined>;
  /** Any workspace: provider callbacks and workers know only the id. */
  find(id: string): Promise<Connection | undefined>;
  /** Row-locked read, for status transitions that must not interleave. */
  lock(id: string): Promise<Connection | undefined>;
  list(workspaceId: string): Promise<Connection[]>;
  count(workspaceId: string): Promise<number>;
  /** Connections whose session should be running (for the worker at start). */
  wantingSession(): Promise<Connection[]>;
}

/** A domain event for the connection's subscribers (webhooks deliver them; spec 6.1 envelope). */
export interface ConnectionEventRecord {
  event: string;
  workspaceId: string;
  connectionId: string;
  remoteJid: string | null;
  sender: string | null;
  data: unknown;
}

/** Writes events into the transaction's outbox: committed with the change that caused them. */
export interface EventPublisher {
  publish(event: ConnectionEventRecord): Promise<void>;
  /** Several events of one change (a batch of sends), in this order. */
  publishMany(events: readonly ConnectionEventRecord[]): Promise<void>;
}
