import type { ColumnType, Insertable, Selectable } from 'kysely';

/** Columns the database fills in on insert. */
type Generated<T> = ColumnType<T, T | undefined, T>;

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  created_at: Generated<Date>;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  is_personal: boolean;
  helpdesk_enabled: boolean;
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
  available: number;
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
  kind: string;
  status: string;
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
  schema_migrations: SchemaMigrationsTable;
}

export type UserRow = Selectable<UsersTable>;
export type WorkspaceRow = Selectable<WorkspacesTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type NewApiToken = Insertable<ApiTokensTable>;
