import type { ColumnType, Insertable, Selectable } from 'kysely';

/** Columns the database fills in on insert. */
type Generated<T> = ColumnType<T, T | undefined, T>;

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  created_at: Generated<Date>;
  /** Set when the person accepted an invitation mailed to this address (migration 0013). */
  email_verified_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  is_personal: boolean;
  plan: string;
  created_at: Generated<Date>;
}

export interface MembershipsTable {
  workspace_id: string;
  user_id: string;
  roles: string[];
  created_at: Generated<Date>;
}

export interface ApiTokensTable {
  id: string;
  workspace_id: string;
  user_id: string;
  name: string;
  secret_hash: string;
  token_last4: string;
  created_at: Generated<Date>;
  last_used_at: Date | null;
}

export interface CreditAccountsTable {
  workspace_id: string;
  period_start: Date;
  /** May be below 0 after a quota was lowered under what the month already used. */
  available: number;
  /** The plan's monthly credits the period was granted with; null on rows from before it was recorded. */
  allowance: number | null;
}

export interface CreditReservationsTable {
  id: string;
  workspace_id: string;
  amount: number;
  consumed: number;
  refunded: number;
  status: string;
  reason: string;
  created_at: Date;
}

export interface ConnectionsTable {
  id: string;
  workspace_id: string;
  name: string;
  /** The driver's name: sandbox, cloud-api, baileys. */
  kind: string;
  status: string;
  /** Driver settings, encrypted (adapters/crypto/secret-box.ts). */
  credentials: Generated<string>;
  phone_number: string | null;
  qr: string | null;
  pairing_code: string | null;
  status_reason: string | null;
  /** How provider callbacks find the connection (official: the phone number id). */
  routing_key: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ChatsTable {
  connection_id: string;
  remote_jid: string;
  name: string | null;
  last_message_at: Date;
  last_contact_message_at: Date | null;
}

export interface MessagesTable {
  id: string;
  workspace_id: string;
  connection_id: string;
  direction: 'inbound' | 'outbound';
  remote_jid: string;
  external_id: string | null;
  kind: string;
  content: unknown;
  status: string;
  error: unknown | null;
  idempotency_key: string | null;
  reservation_id: string | null;
  reply_to: string | null;
  sent_by: string | null;
  message_timestamp: Date;
  created_at: Date;
  updated_at: Date;
  /** The send queue (core/messaging/send-record.ts): set while an outbound message's send is in progress. */
  send_state: 'queued' | 'claimed' | 'in_flight' | 'in_doubt' | null;
  send_due_at: Date | null;
  send_owner: string | null;
  send_attempts: Generated<number>;
  send_hops: Generated<number>;
}

export interface MediaTable {
  id: string;
  workspace_id: string;
  connection_id: string;
  origin: 'upload' | 'received';
  driver_ref: string | null;
  mimetype: string;
  file_name: string | null;
  size: number | null;
  bytes: Uint8Array | null;
  created_at: Date;
}

export interface UsedTicketsTable {
  nonce: string;
  expires_at: Date;
}

export interface EventsTable {
  id: string;
  workspace_id: string;
  connection_id: string | null;
  event: string;
  remote_jid: string | null;
  payload: unknown;
  created_at: Date;
}

export interface HeldReceiptsTable {
  connection_id: string;
  external_id: string;
  status: string;
  error: unknown | null;
  received_at: Generated<Date>;
}

export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  events: string[];
  connections: string[];
  hmac_enabled: boolean;
  /** Sealed (adapters/crypto/secret-box.ts): it must be read back to sign. */
  secret: string;
  message_group_delay: number | null;
  enable_simulate_typing: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  workspace_id: string;
  event: string;
  event_ids: string[];
  body: string;
  /** Which kind of webhook: `connection`, or a plugin's (`helpdesk`). */
  target: Generated<string>;
  state: string;
  attempts: number;
  created_at: Date;
  updated_at: Date;
  /** When it is due (null once settled); see migration 0011. */
  next_attempt_at: Date | null;
  claim_id: Generated<string | null>;
  claimed_until: Generated<Date | null>;
  attempts_made: Generated<number>;
}

/** Events waiting for the enabled plugins' subscribers (migration 0012). */
export interface PluginEventQueueTable {
  event_id: string;
  due_at: Generated<Date>;
  attempts: Generated<number>;
  claim_id: Generated<string | null>;
  claimed_until: Generated<Date | null>;
}

/** Events waiting to be fanned out to webhooks (migration 0011). */
export interface WebhookFanoutTable {
  event_id: string;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface WebhookBatchesTable {
  webhook_id: string;
  connection_id: string;
  remote_jid: string;
  closes_at: Date;
  version: number;
  events: unknown;
}

export interface ServiceKeysTable {
  name: string;
  secret: string;
  created_at: Generated<Date>;
}

export interface SchemaMigrationsTable {
  module: string;
  name: string;
  executed_at: Generated<Date>;
}

/** The base tables. Plugins extend this interface with their own tables. */
export interface Database {
  users: UsersTable;
  workspaces: WorkspacesTable;
  memberships: MembershipsTable;
  api_tokens: ApiTokensTable;
  credit_accounts: CreditAccountsTable;
  credit_reservations: CreditReservationsTable;
  connections: ConnectionsTable;
  chats: ChatsTable;
  messages: MessagesTable;
  media: MediaTable;
  used_tickets: UsedTicketsTable;
  events: EventsTable;
  service_keys: ServiceKeysTable;
  held_receipts: HeldReceiptsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_batches: WebhookBatchesTable;
  webhook_fanout: WebhookFanoutTable;
  plugin_event_queue: PluginEventQueueTable;
  oauth_clients: OAuthClientsTable;
  oauth_pending_requests: OAuthPendingRequestsTable;
  oauth_consents: OAuthConsentsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  web_sessions: WebSessionsTable;
  templates: TemplatesTable;
  invitations: InvitationsTable;
  auth_failures: AuthFailuresTable;
  schema_migrations: SchemaMigrationsTable;
}

/** Message templates of official connections (migration 0010). */
export interface TemplatesTable {
  id: string;
  workspace_id: string;
  connection_id: string;
  /** The platform's id of the template. */
  external_id: string;
  name: string;
  language: string;
  category: string;
  components: unknown[];
  /** PENDING, APPROVED, REJECTED, PAUSED, DISABLED, IN_APPEAL (core/templates/template-status.ts). */
  status: string;
  rejected_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface OAuthClientsTable {
  id: string;
  secret_hash: string | null;
  token_endpoint_auth_method: string;
  name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
  redirect_uris: string[];
  grant_types: string[];
  scopes: string[];
  required_scopes: Generated<string[]>;
  expire_access_tokens: Generated<boolean>;
  verified: Generated<boolean>;
  registration: string;
  workspace_id: string | null;
  created_by: string | null;
  created_at: Date;
  /** METADATA_DOCUMENT clients: when the fetched copy goes stale (migration 0015). */
  metadata_expires_at: Date | null;
}

export interface OAuthPendingRequestsTable {
  id: string;
  client_id: string;
  redirect_uri: string;
  scopes: string[];
  state: string | null;
  code_challenge: string;
  resource: string | null;
  prompt: string | null;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
}

export interface OAuthConsentsTable {
  id: string;
  client_id: string;
  user_id: string;
  workspace_id: string;
  scopes: string[];
  created_at: Date;
  updated_at: Date;
  /** The scopes of the last scope challenge met by this grant's tokens, until `step_up_until` (migration 0015). */
  step_up_scopes: string[] | null;
  step_up_until: Date | null;
}

export interface OAuthCodesTable {
  hash: string;
  consent_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  scopes: string[];
  resource: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export interface OAuthTokensTable {
  id: string;
  hash: string;
  kind: 'ACCESS' | 'REFRESH';
  state: 'ACTIVE' | 'ROTATED' | 'REVOKED';
  consent_id: string;
  client_id: string;
  user_id: string;
  workspace_id: string;
  scopes: string[];
  resource: string | null;
  created_at: Date;
  expires_at: Date | null;
}

/** Sign-in sessions (migrations 0007, 0019); only the cookie's hash is kept. */
export interface WebSessionsTable {
  id_hash: string;
  /** The public id, for listing and ending sessions. */
  id: string;
  user_id: string;
  csrf: string;
  created_at: Date;
  last_seen_at: Date;
  /** The idle expiry: moves forward with use, never past `absolute_expires_at`. */
  expires_at: Date;
  absolute_expires_at: Date;
  user_agent: string | null;
}

/** Invitations to join a workspace (migration 0013); only the token's hash is kept. */
export interface InvitationsTable {
  id: string;
  workspace_id: string;
  email: string;
  roles: string[];
  invited_by: string | null;
  token_hash: string;
  delivered_by: string;
  status: string;
  expires_at: Date;
  accepted_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export type UserRow = Selectable<UsersTable>;
export type WorkspaceRow = Selectable<WorkspacesTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type NewApiToken = Insertable<ApiTokensTable>;

/** Failed authentications per (kind, key) (migration 0014; core/security/auth-throttle.ts). */
export interface AuthFailuresTable {
  kind: string;
  key: string;
  failures: number;
  started_at: Date;
  updated_at: Date;
  blocked_until: Date | null;
}
