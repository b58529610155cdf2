import type { ColumnType, Generated, Kysely } from 'kysely';
import type { Database } from '../kernel/storage.ts';

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
  /** migrations/0011_agent_bots.ts: the agent bot that sent it. */
  sender_agent_bot_id: string | null;
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

/** migrations/0008_inbox_sync.ts: history syncs of inboxes (core/helpdesk/inboxes/inbox-sync.ts). */
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

/** migrations/0013_csat.ts: CSAT settings per inbox, surveys sent, answers (core/helpdesk/csat/csat.ts). */
export interface HelpdeskCsatSettingsTable {
  inbox_id: string;
  workspace_id: string;
  enabled: boolean;
  /** Null: the default invitation text. */
  message: string | null;
  updated_at: Date;
}

export interface HelpdeskCsatSurveysTable {
  conversation_id: string;
  workspace_id: string;
  inbox_id: string;
  message_id: string | null;
  assignee_user_id: string | null;
  team_id: string | null;
  sent_at: Date;
}

export interface HelpdeskCsatResponsesTable {
  conversation_id: string;
  workspace_id: string;
  inbox_id: string;
  rating: number;
  comment: string | null;
  assignee_user_id: string | null;
  team_id: string | null;
  submitted_at: Date;
}

/** migrations/0010_assignment.ts: automatic assignment (core/helpdesk/assignment/auto-assignment.ts). */
export interface HelpdeskAssignmentSettingsTable {
  inbox_id: string;
  workspace_id: string;
  enabled: Generated<boolean>;
  updated_at: Date | null;
}

export interface HelpdeskAssignmentRotationsTable {
  id: Generated<string>;
  workspace_id: string;
  inbox_id: string;
  team_id: string | null;
  last_user_id: string | null;
  updated_at: Date;
}

export interface HelpdeskAssignmentDecisionsTable {
  conversation_id: string;
  workspace_id: string;
  inbox_id: string;
  team_id: string | null;
  trigger: 'arrival' | 'handoff';
  outcome: string;
  assignee_user_id: string | null;
  decided_at: Date;
}

/** migrations/0011_agent_bots.ts: agent bots (core/helpdesk/bots/agent-bots.ts), the inboxes they serve, their turns. */
export interface HelpdeskAgentBotsTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  webhook_url: string;
  /** SHA-256 of the access token (never stored itself). */
  access_token_hash: string;
  access_token_last4: string;
  /** Sealed with the service's secret box (deliveries are signed with it). */
  signing_secret: string;
  created_at: Date;
  updated_at: Date;
}

export interface HelpdeskAgentBotInboxesTable {
  inbox_id: string;
  agent_bot_id: string;
  workspace_id: string;
  bound_at: Date;
}

export interface HelpdeskAgentBotTurnsTable {
  conversation_id: string;
  workspace_id: string;
  agent_bot_id: string | null;
  taken: boolean;
  decided_at: Date;
}

/** migrations/0011_ai_settings.ts: the workspace's AI provider (core/helpdesk/ai/ai-settings.ts). */
export interface HelpdeskAiSettingsTable {
  workspace_id: string;
  enabled: boolean;
  provider: string;
  base_url: string | null;
  model: string | null;
  /** Sealed with the service's secret box; never returned. */
  api_key: string | null;
  updated_at: Date;
}

/** migrations/0014_notifications_macros.ts: mentions, notifications, canned responses, macros. */
export interface HelpdeskMentionsTable {
  id: string;
  workspace_id: string;
  conversation_id: string;
  message_id: string;
  mentioned_user_id: string;
  actor_user_id: string | null;
  created_at: Date;
}

export interface HelpdeskNotificationsTable {
  id: string;
  workspace_id: string;
  user_id: string;
  type: 'mention' | 'assigned' | 'new_message_in_assigned';
  primary_actor_type: 'conversation';
  primary_actor_id: string;
  secondary_actor_type: 'user' | 'contact' | null;
  secondary_actor_id: string | null;
  conversation_id: string;
  message_id: string | null;
  source_event_id: string;
  read_at: Date | null;
  created_at: Date;
}

export interface HelpdeskCannedResponsesTable {
  id: string;
  workspace_id: string;
  short_code: string;
  short_code_key: string;
  content: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface HelpdeskMacrosTable {
  id: string;
  workspace_id: string;
  name: string;
  visibility: 'personal' | 'workspace';
  created_by: string | null;
  actions: ColumnType<unknown[], string, string>;
  created_at: Date;
  updated_at: Date;
}

/** migrations/0012_sla.ts: business hours, SLA policies, conversation timing, breaches, out-of-office replies. */
export interface HelpdeskBusinessHoursTable {
  inbox_id: string;
  workspace_id: string;
  enabled: boolean;
  /** Seven lists (Monday first) of `{ start, end }`, minutes of the local day. */
  weekly_hours: ColumnType<Array<Array<{ start: number; end: number }>>, string, string>;
  holidays: ColumnType<Array<{ date: string; name: string | null }>, string, string>;
  out_of_office_enabled: boolean;
  out_of_office_message: string | null;
  updated_at: Date;
}

export interface HelpdeskSlaPoliciesTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  first_response_minutes: number | null;
  next_response_minutes: number | null;
  resolution_minutes: number | null;
  only_business_hours: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface HelpdeskSlaPolicyInboxesTable {
  inbox_id: string;
  policy_id: string;
  workspace_id: string;
}

export interface HelpdeskConversationTimingTable {
  conversation_id: string;
  workspace_id: string;
  inbox_id: string;
  policy_id: string | null;
  applied_at: Date;
  first_reply_at: Date | null;
  waiting_since: Date | null;
  resolved_at: Date | null;
  reopened_at: Date | null;
  first_response_due_at: Date | null;
  next_response_due_at: Date | null;
  resolution_due_at: Date | null;
  updated_at: Date;
}

export interface HelpdeskSlaBreachesTable {
  id: Generated<string>;
  conversation_id: string;
  workspace_id: string;
  inbox_id: string;
  policy_id: string | null;
  target: 'first_response' | 'next_response' | 'resolution';
  due_at: Date;
  breached_at: Date;
}

export interface HelpdeskOutOfOfficeRepliesTable {
  conversation_id: string;
  reopens_at: Date;
  workspace_id: string;
  message_id: string | null;
  sent_at: Date;
}

export interface HelpdeskTables {
  helpdesk_inboxes: HelpdeskInboxesTable;
  helpdesk_inbox_members: HelpdeskInboxMembersTable;
  helpdesk_contacts: HelpdeskContactsTable;
  helpdesk_display_counters: HelpdeskDisplayCountersTable;
  helpdesk_conversations: HelpdeskConversationsTable;
  helpdesk_messages: HelpdeskMessagesTable;
  helpdesk_agent_bots: HelpdeskAgentBotsTable;
  helpdesk_agent_bot_inboxes: HelpdeskAgentBotInboxesTable;
  helpdesk_agent_bot_turns: HelpdeskAgentBotTurnsTable;
  helpdesk_ai_settings: HelpdeskAiSettingsTable;
  helpdesk_labels: HelpdeskLabelsTable;
  helpdesk_attachments: HelpdeskAttachmentsTable;
  helpdesk_webhooks: HelpdeskWebhooksTable;
  helpdesk_api_messages: HelpdeskApiMessagesTable;
  helpdesk_api_contacts: HelpdeskApiContactsTable;
  helpdesk_teams: HelpdeskTeamsTable;
  helpdesk_team_members: HelpdeskTeamMembersTable;
  helpdesk_inbox_syncs: HelpdeskInboxSyncsTable;
  helpdesk_assignment_settings: HelpdeskAssignmentSettingsTable;
  helpdesk_assignment_rotations: HelpdeskAssignmentRotationsTable;
  helpdesk_assignment_decisions: HelpdeskAssignmentDecisionsTable;
  helpdesk_business_hours: HelpdeskBusinessHoursTable;
  helpdesk_sla_policies: HelpdeskSlaPoliciesTable;
  helpdesk_sla_policy_inboxes: HelpdeskSlaPolicyInboxesTable;
  helpdesk_conversation_timing: HelpdeskConversationTimingTable;
  helpdesk_sla_breaches: HelpdeskSlaBreachesTable;
  helpdesk_out_of_office_replies: HelpdeskOutOfOfficeRepliesTable;
  helpdesk_csat_settings: HelpdeskCsatSettingsTable;
  helpdesk_csat_surveys: HelpdeskCsatSurveysTable;
  helpdesk_csat_responses: HelpdeskCsatResponsesTable;
  helpdesk_mentions: HelpdeskMentionsTable;
  helpdesk_notifications: HelpdeskNotificationsTable;
  helpdesk_canned_responses: HelpdeskCannedResponsesTable;
  helpdesk_macros: HelpdeskMacrosTable;
}

/** The base tables the plugin reads (connections, memberships, users, workspaces) plus its own. */
export type HelpdeskDatabase = Database & HelpdeskTables;

export function helpdeskDb(db: Kysely<Database>): Kysely<HelpdeskDatabase> {
  return db as unknown as Kysely<HelpdeskDatabase>;
}
