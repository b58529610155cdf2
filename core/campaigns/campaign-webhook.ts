import type { DeliveryEndpoint } from '../webhooks/dispatch.ts';
import { SIGNATURE_HEADER, signDelivery, TIMESTAMP_HEADER } from '../webhooks/signature.ts';
import type { Campaign, CampaignEventName } from './campaign.ts';

/** Deliveries of campaign events, through the base delivery engine (3 attempts, history). */
export const CAMPAIGN_TARGET = 'campaign';

export const CAMPAIGN_EVENTS: readonly CampaignEventName[] = [
  'campaign.started',
  'campaign.progress',
  'campaign.paused',
  'campaign.resumed',
  'campaign.completed',
  'campaign.cancelled',
  'campaign.failed',
];

/** `{ event, campaignId, data, sentAt }`: `data` is the campaign as the API shows it, progress included. */
export function campaignEnvelope(event: CampaignEventName, campaignId: string, data: unknown, at: Date): string {
  return JSON.stringify({ event, campaignId, data, sentAt: at.toISOString() });
}

/**
 * The campaign's webhook, signed like connection webhooks when it has a secret (spec 6.4:
 * `X-Switchboard-Signature-256` over `"<timestamp>.<raw body>"`, `X-Switchboard-Timestamp`), so
 * one verification helper serves both.
 */
export function campaignEndpoint(campaign: Pick<Campaign, 'webhook'>, delivery: { id: string; event: string }): DeliveryEndpoint | undefined {
  const webhook = campaign.webhook;
  if (!webhook) return undefined;
  return {
    url: webhook.url,
    headers(body, timestamp) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'Switchboard-Webhooks/1',
        'x-switchboard-delivery': delivery.id,
        'x-switchboard-event': delivery.event,
      };
      if (webhook.secret) {
        headers[SIGNATURE_HEADER] = signDelivery(webhook.secret, timestamp, body);
        headers[TIMESTAMP_HEADER] = String(timestamp);
      }
      return headers;
    },
  };
}
