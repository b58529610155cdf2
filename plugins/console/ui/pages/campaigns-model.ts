/**
 * What the campaign pages read from `/v3/campaigns`, and how they tell that the campaigns plugin
 * is off: its routes are absent, so the list answers a bare 404 (a missing campaign answers
 * 404 CAMPAIGN_NOT_FOUND instead).
 */
import { ApiError } from '../api.ts';
import type { CampaignProgress as Progress } from '../../../../core/campaigns/campaign.ts';
import type { CampaignStatus } from '../../../../core/campaigns/campaign-status.ts';
import type { Connection } from './connections-model.ts';
export type { CampaignStatus, Connection, Progress };

export interface Campaign {
  id: string;
  name: string;
  connectionId: string | null;
  status: CampaignStatus;
  statusReason: string | null;
  message: unknown;
  schedule: { startAt: string | null; timezone: string | null };
  pace: { messagesPerMinute: number | null; jitterSeconds: number; quietHours: { from: string; to: string; timezone: string } | null };
  progress: Progress;
  credits: { reserved: number; consumed: number; refunded: number; held: number };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface Recipient {
  position: number;
  phone: string;
  variables: Record<string, string>;
  status: string;
  error: string | null;
  dispatchedAt: string | null;
  repliedAt: string | null;
}


/** Recipients still to be sent: queued, or handed to the driver and not yet accepted. */
export const pending = (p: Progress) => p.queued + p.sending;

/** Recipients the campaign is done with, whatever the outcome. */
export const handled = (p: Progress) => p.total - pending(p);

export function pluginIsOff(error: Error | undefined): boolean {
  return error instanceof ApiError && error.status === 404 && !error.messages.includes('CAMPAIGN_NOT_FOUND');
}
