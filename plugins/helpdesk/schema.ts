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

export interface HelpdeskTables {
  helpdesk_inboxes: HelpdeskInboxesTable;
  helpdesk_inbox_members: HelpdeskInboxMembersTable;
  helpdesk_contacts: HelpdeskContactsTable;
}

/** The base tables the plugin reads (connections, memberships, users, workspaces) plus its own. */
export type HelpdeskDatabase = Database & HelpdeskTables;

export function helpdeskDb(db: Kysely<Database>): Kysely<HelpdeskDatabase> {
  return db as unknown as Kysely<HelpdeskDatabase>;
}
