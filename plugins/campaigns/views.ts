import type { Campaign, CampaignProgress, RecipientView } from '../../core/campaigns/campaign.ts';
import type { Reservation } from '../../core/plans/credit-ledger.ts';

import type { Static } from '@sinclair/typebox';
import { CampaignView as CampaignViewSchema } from './request-schemas.ts';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * A campaign as the API, the webhook and the MCP tools show it. `credits`: reserved at launch for
 * the recipients to send to; `consumed` by sends the network accepted; `refunded` to the plan
 * (failed sends, opt-outs met while sending, cancelled recipients); `held` still reserved
 * (recipients queued or in flight).
 */
export function campaignView(campaign: Campaign, progress: CampaignProgress, reservation?: Reservation): Static<typeof CampaignViewSchema> {
  return {
    id: campaign.id,
    name: campaign.name,
    connectionId: campaign.connectionId,
    status: campaign.status,
    statusReason: campaign.statusReason,
    message: campaign.message,
    schedule: { startAt: iso(campaign.startAt), timezone: campaign.timezone },
    pace: campaign.pace,
    webhook: campaign.webhook ? { url: campaign.webhook.url, signed: campaign.webhook.secret !== null } : null,
    progress,
    credits: reservation
      ? {
          reserved: reservation.amount,
          consumed: reservation.consumed,
          refunded: reservation.refunded,
          held: reservation.amount - reservation.consumed - reservation.refunded,
        }
      : { reserved: 0, consumed: 0, refunded: 0, held: 0 },
    createdBy: campaign.createdBy,
    createdAt: campaign.createdAt.toISOString(),
    updatedAt: campaign.updatedAt.toISOString(),
    startedAt: iso(campaign.startedAt),
    finishedAt: iso(campaign.finishedAt),
  };
}

export type CampaignView = ReturnType<typeof campaignView>;

export function recipientView(recipient: RecipientView) {
  return {
    position: recipient.position,
    phone: recipient.phone,
    variables: recipient.variables,
    status: recipient.status,
    error: recipient.error,
    messageId: recipient.messageId,
    dispatchedAt: iso(recipient.dispatchedAt),
    repliedAt: iso(recipient.repliedAt),
  };
}
