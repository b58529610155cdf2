import type { ColumnType, Kysely } from 'kysely';
import type { Database, DatabaseHandle } from '../kernel/storage.ts';

/** The campaigns plugin's tables (migrations/0001_campaigns.ts); the base schema stays untouched. */
export interface CampaignsTable {
  id: string;
  workspace_id: string;
  connection_id: string | null;
  name: string;
  status: string;
  message: ColumnType<unknown, string, string>;
  start_at: Date | null;
  timezone: string | null;
  pace: ColumnType<unknown, string, string>;
  reservation_id: string | null;
  audience_size: number;
  status_reason: string | null;
  webhook_url: string | null;
  /** Sealed with the service's secret box. */
  webhook_secret: string | null;
  next_slot_at: Date | null;
  tick: number;
  last_progress_at: Date | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface CampaignRecipientsTable {
  campaign_id: string;
  position: number;
  phone: string;
  variables: ColumnType<unknown, string, string>;
  status: string;
  error: string | null;
  message_id: string | null;
  dispatched_at: Date | null;
  replied_at: Date | null;
}

export interface CampaignOptOutsTable {
  workspace_id: string;
  phone: string;
  reason: string;
  created_at: Date;
}

export interface CampaignsDatabase extends Database {
  campaigns: CampaignsTable;
  campaign_recipients: CampaignRecipientsTable;
  campaign_opt_outs: CampaignOptOutsTable;
}

export function campaignsDb(db: DatabaseHandle): Kysely<CampaignsDatabase> {
  return db as unknown as Kysely<CampaignsDatabase>;
}
