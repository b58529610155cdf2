import type { ColumnType, Generated, Kysely } from 'kysely';
import type { Database } from '../../adapters/postgres/schema.ts';

/** The helpdesk plugin's tables (migrations/0001_helpdesk.ts); the base schema stays untouched. */
export interface HelpdeskInboxesTable {
  id: string;
  workspace_id: string;
  name: string;
  channel_type: 'CONNECTION' | 'API';
  connection_id: string | null;
  timezone: Generated<string>;
  webhook_url: string | null;
  hmac_mandatory: Generated<boolean>;
  /** Sealed with the service's secret box (recoverable: it is shown again as `channelConfig.hmacToken`). */
  inbound_secret: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface HelpdeskInboxMembersTable {
  inbox_id: string;
  user_id: string;
  created_at: Date;
}

export interface HelpdeskContactsTable {
  id: string;
  workspace_id: string;
  name: string | null;
  phone: string | null;
  email: string | null;
  custom_attributes: ColumnType<Record<string, unknown>, string, string>;
  created_at: Date;
  updated_at: Date;
}

export interface HelpdeskWebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  subscriptions: string[];
  inbox_id: string | null;
  /** Sealed with the service's secret box (the delivery engine signs with it). */
  signing_secret: string;
  secret_chosen: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface HelpdeskDisplayCountersTable {
  workspace_id: string;
  last_display_id: number;
}

export interface HelpdeskConversationsTable {
  id: string;
  workspace_id: string;
  display_id: number;
  inbox_id: string;
  contact_id: string;
  status: 'OPEN' | 'PENDING' | 'SNOOZED' | 'RESOLVED';
  snoozed_until: Date | null;
  priority: 'LOW' | 'MEDIUM' | 'HIGH' | 'URGENT' | null;
  assignee_user_id: string | null;
  assignee_agent_bot_id: Generated<string | null>;
  team_id: string | null;
  labels: string[];
  custom_attributes: ColumnType<Record<string, unknown>, string, string>;
  ai_agent_enabled: boolean;
  assignee_last_seen_at: Date | null;
  last_activity_at: Date;
  created_at: Date;
  updated_at: Date;
}

export interface HelpdeskMessagesTable {
  id: string;
  conversation_id: string;
  workspace_id: string;
  direction: 'incoming' | 'outgoing' | 'activity';
  private: boolean;
  content: string;
  sender_user_id: string | null;
  chat_message_id: string | null;
  status: 'PENDING' | 'SENT' | 'DELIVERED' | 'READ' | 'FAILED' | null;
  external_error: string | null;
  created_at: Date;
}

/** migrations/0005_api_channel.ts: messages that travelled through an API inbox. */
export interface HelpdeskApiMessagesTable {
  message_id: string;
  inbox_id: string;
  workspace_id: string;
  conversation_id: string;
  direction: 'incoming' | 'outgoing';
  source_id: string | null;
  recipient_identifier: string | null;
  delivery_state: 'PENDING' | 'RETRYING' | 'SUCCEEDED' | 'FAILED' | null;
  attempts: Generated<number>;
  last_outcome: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The customer app's identifier of a contact of an API inbox. */
export interface HelpdeskApiContactsTable {
  inbox_id: string;
  contact_id: string;
  identifier: string;
  updated_at: Date;
}

/** migrations/0006_teams.ts: teams of agents and their members. */
export interface HelpdeskTeamsTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface HelpdeskTeamMembersTable {
  team_id: string;
  user_id: string;
  created_at: Date;
}

/** migrations/0007_labels_attachments.ts: the workspace's labels. */
export interface HelpdeskLabelsTable {
  id: string;
  workspace_id: string;
  name: string;
  /** The name trimmed and lower-cased: unique per workspace. */
  name_key: string;
  color: string | null;
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Files on helpdesk messages: bytes here (an upload) or in a connection media item. */
export interface HelpdeskAttachmentsTable {
  id: string;
  workspace_id: string;
  conversation_id: string;
  message_id: string | null;
  media_id: string | null;
  file_name: string;
  mime_type: string;
  size: number | null;
  bytes: Uint8Array | null;
  uploaded_by: string | null;
  created_at: Date;
}

/** migrations/0008_inbox_sync.ts: history syncs of inboxes (core/helpdesk/inbox-sync.ts). */
export interface HelpdeskInboxSyncsTable {
  id: string;
  workspace_id: string;
  inbox_id: string;
  connection_id: string;
  status: 'RUNNING' | 'COMPLETED' | 'FAILED';
  cursor: string | null;
  chats_per_page: number;
  contacts_total: number;
  contacts_processed: number;
  contacts_created: number;
  conversations_total: number;
  conversations_processed: number;
  conversations_created: number;
  messages_imported: number;
  error: string | null;
  started_at: Date;
  finished_at: Date | null;
  updated_at: Date;
}

export interface HelpdeskTables {
  helpdesk_inboxes: HelpdeskInboxesTable;
  helpdesk_inbox_members: HelpdeskInboxMembersTable;
  helpdesk_contacts: HelpdeskContactsTable;
  helpdesk_display_counters: HelpdeskDisplayCountersTable;
  helpdesk_conversations: HelpdeskConversationsTable;
  helpdesk_messages: HelpdeskMessagesTable;
  helpdesk_labels: HelpdeskLabelsTable;
  helpdesk_attachments: HelpdeskAttachmentsTable;
  helpdesk_webhooks: HelpdeskWebhooksTable;
  helpdesk_api_messages: HelpdeskApiMessagesTable;
  helpdesk_api_contacts: HelpdeskApiContactsTable;
  helpdesk_teams: HelpdeskTeamsTable;
  helpdesk_team_members: HelpdeskTeamMembersTable;
  helpdesk_inbox_syncs: HelpdeskInboxSyncsTable;
}

/** The base tables the plugin reads (connections, memberships, users, workspaces) plus its own. */
export type HelpdeskDatabase = Database & HelpdeskTables;

export function helpdeskDb(db: Kysely<Database>): Kysely<HelpdeskDatabase> {
  return db as unknown as Kysely<HelpdeskDatabase>;
}
