import type { RecordWrites } from '../shared/workspace-records.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { OutgoingContent } from '../messaging/outgoing.ts';
import type { AudienceEntry, AudienceEntryStatus } from './audience.ts';
import type { CampaignStatus } from './campaign-status.ts';
import type { Pace } from './pacing.ts';

/** One message to many recipients on one connection (spec 1.3, 8; the record's fields are ours). */
export interface Campaign {
  id: string;
  workspaceId: string;
  /** Null once the connection was deleted (the campaign then fails). */
  connectionId: string | null;
  name: string;
  status: CampaignStatus;
  /** The message, with `{{variable}}` placeholders filled per recipient. */
  message: OutgoingContent;
  /** When sending starts; null: at launch. */
  startAt: Date | null;
  /** The IANA zone the start time was given in (kept to show it back). */
  timezone: string | null;
  pace: Pace;
  /** The credit reservation for the audience, from launch. */
  reservationId: string | null;
  /** Recipients to send to (QUEUED at launch): the credits reserved. */
  audienceSize: number;
  /** Why the campaign is paused or failed, when the service did it (`connection_not_connected`…). */
  statusReason: string | null;
  /** Where campaign events go (progress, completed…): signed when a secret is set. */
  webhook: CampaignWebhook | null;
  /** Pacer state: earliest next send. */
  nextSlotAt: Date | null;
  /** Each pacer run has a number; a run whose number is not the current one does nothing. */
  tick: number;
  lastProgressAt: Date | null;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface CampaignWebhook {
  url: string;
  secret: string | null;
}

/**
 * A recipient as stored. `DISPATCHED` means its message exists (our id in `messageId`) and from
 * then on the message's own status tells how it went; the others never had a message.
 */
export type RecipientStatus = AudienceEntryStatus | 'DISPATCHED' | 'SKIPPED' | 'CANCELLED';

export interface CampaignRecipient {
  campaignId: string;
  position: number;
  phone: string;
  variables: Record<string, string>;
  status: RecipientStatus;
  error: string | null;
  messageId: string | null;
  dispatchedAt: Date | null;
  repliedAt: Date | null;
}

/** A recipient as reported: the message's delivery status once dispatched. */
export const REPORTED_RECIPIENT_STATUSES = ['QUEUED', 'SENDING', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'SKIPPED', 'OPTED_OUT', 'CANCELLED', 'INVALID'] as const;
export type ReportedRecipientStatus = (typeof REPORTED_RECIPIENT_STATUSES)[number];

/** A recipient's status as reported: its message's once dispatched (a message gone counts as failed). */
export function reportedRecipientStatus(recipient: string, message: string | null | undefined): ReportedRecipientStatus {
  if (recipient !== 'DISPATCHED') return recipient as ReportedRecipientStatus;
  switch (message) {
    case 'PENDING':
      return 'SENDING';
    case 'SENT':
    case 'DELIVERED':
    case 'READ':
    case 'FAILED':
      return message;
    default:
      return 'FAILED';
  }
}

export interface RecipientView {
  position: number;
  phone: string;
  variables: Record<string, string>;
  status: ReportedRecipientStatus;
  error: string | null;
  messageId: string | null;
  dispatchedAt: Date | null;
  repliedAt: Date | null;
}

/** Progress counts. `sent` includes delivered and read; `delivered` includes read. */
export interface CampaignProgress {
  total: number;
  queued: number;
  sending: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  replied: number;
  skipped: number;
  optedOut: number;
  cancelled: number;
  invalid: number;
}

export interface CampaignStore extends RecordWrites<Campaign> {
  get(workspaceId: string, id: string): Promise<Campaign | undefined>;
  /** Read under a row lock until the transaction ends: every change of a campaign goes through it. */
  lock(id: string): Promise<Campaign | undefined>;
  list(workspaceId: string, request: PageRequest & { status?: CampaignStatus; connectionId?: string }): Promise<Page<Campaign>>;
  /** Campaigns of a connection in these statuses (for a connection going down or coming back). */
  ofConnection(connectionId: string, statuses: readonly CampaignStatus[]): Promise<Campaign[]>;
}

export interface RecipientStore {
  insertMany(campaignId: string, entries: readonly AudienceEntry[]): Promise<void>;
  /** The next queued recipients in audience order, locked (skipping rows another run holds). */
  nextQueued(campaignId: string, limit: number): Promise<CampaignRecipient[]>;
  /** Records how each of these recipients left the queue. */
  settle(campaignId: string, outcomes: ReadonlyArray<{ position: number; status: RecipientStatus; error: string | null; messageId: string | null; at: Date }>): Promise<void>;
  /** Moves every queued recipient to `CANCELLED`; returns how many. */
  cancelQueued(campaignId: string): Promise<number>;
  countQueued(campaignId: string): Promise<number>;
  /** Dispatched recipients whose message has not left PENDING. */
  countInFlight(campaignId: string): Promise<number>;
  /** Sends made since `since` (exclusive) and the oldest of them. */
  sentSince(campaignId: string, since: Date): Promise<{ count: number; oldest: Date | null }>;
  progress(campaignId: string): Promise<CampaignProgress>;
  list(campaignId: string, request: PageRequest & { status?: ReportedRecipientStatus }): Promise<Page<RecipientView>>;
  /** The latest dispatched, not yet replied recipient of this number on the connection gets `repliedAt`. */
  markReplied(connectionId: string, phone: string, at: Date): Promise<void>;
}

/** Numbers that asked to receive no more campaigns, per workspace. */
export interface OptOutStore {
  add(workspaceId: string, phone: string, at: Date, reason: string): Promise<void>;
  /** Which of these numbers opted out. */
  among(workspaceId: string, phones: readonly string[]): Promise<Set<string>>;
  list(workspaceId: string, request: PageRequest): Promise<Page<OptOut>>;
  /** True when the number was on the list. */
  remove(workspaceId: string, phone: string): Promise<boolean>;
}

export interface OptOut {
  phone: string;
  reason: string;
  createdAt: Date;
}

/** Campaign events, sent to the campaign's webhook (after the transaction commits). */
export type CampaignEventName = 'campaign.started' | 'campaign.progress' | 'campaign.paused' | 'campaign.resumed' | 'campaign.completed' | 'campaign.cancelled' | 'campaign.failed';

export interface CampaignNotifier {
  notify(campaign: Campaign, event: CampaignEventName, progress: CampaignProgress): Promise<void>;
}

/** Schedules the pacer's next run of a campaign (a queued job, in the caller's transaction). */
export interface PacerSchedule {
  wake(campaignId: string, tick: number, at: Date): Promise<void>;
}
