import type { DatabaseHandle, PluginContext } from '../kernel/context.ts';
import { messagingStores, sendDeps } from '../kernel/storage.ts';
import { dispatchDeps } from '../kernel/webhooks.ts';
import { intlZoneRules } from '../kernel/time-zones.ts';
import type { DeliveryTargetFinder } from '../kernel/webhooks.ts';
import { queueDelivery } from '../../core/webhooks/dispatch.ts';
import type { CampaignNotifier, PacerSchedule } from '../../core/campaigns/campaign.ts';
import type { CampaignDeps, CampaignStores } from '../../core/campaigns/campaigns.ts';
import { CAMPAIGN_RUN_QUEUE } from '../../core/campaigns/sending.ts';
import { CAMPAIGN_TARGET, campaignEndpoint, campaignEnvelope } from '../../core/campaigns/campaign-webhook.ts';
import type { UnitOfWork } from '../../core/shared/unit-of-work.ts';
import { campaignStore, optOutStore, recipientStore } from './campaign-store.ts';
import { campaignView } from './views.ts';

/** Every port of the campaign use cases, bound to one connection or transaction. */
export function campaignStores(db: DatabaseHandle, ctx: PluginContext): CampaignStores {
  const messaging = messagingStores(db, ctx);
  return {
    ...messaging,
    campaigns: campaignStore(db, ctx.box),
    recipients: recipientStore(db),
    optOuts: optOutStore(db),
    notifier: campaignNotifier(messaging, ctx),
    pacer: pacerSchedule(messaging.outbox, ctx),
  };
}

/** The campaign use cases' unit of work: each `transaction` is one database transaction. */
export function campaignUnitOfWork(ctx: PluginContext): UnitOfWork<CampaignStores> {
  return { transaction: (work) => ctx.storage.transaction(campaignStores, (stores) => work(stores)) };
}

export function campaignDeps(ctx: PluginContext): CampaignDeps {
  return {
    ...sendDeps(ctx),
    zones: intlZoneRules,
    fraction: () => new DataView(ctx.random.bytes(4).buffer).getUint32(0) / 2 ** 32,
    outbound: ctx.outbound,
  };
}

/** The delivery engine finds a campaign's webhook by the campaign's id. */
export const campaignDeliveryTarget: DeliveryTargetFinder = (db, ctx) => ({
  async find(delivery) {
    const campaign = await campaignStore(db, ctx.box).lock(delivery.webhookId);
    return campaign ? campaignEndpoint(campaign, delivery) : undefined;
  },
});

/**
 * Campaign events go to the campaign's webhook as deliveries written in the transaction of the
 * change (the outbox): retried, kept in the delivery history, never sent for a rolled-back change.
 */
function campaignNotifier(stores: ReturnType<typeof messagingStores>, ctx: PluginContext): CampaignNotifier {
  return {
    async notify(campaign, event, progress) {
      if (!campaign.webhook) return;
      const reservation = campaign.reservationId ? await stores.credits.findReservation(campaign.reservationId) : undefined;
      const body = campaignEnvelope(event, campaign.id, campaignView(campaign, progress, reservation), ctx.clock.now());
      await queueDelivery(stores, dispatchDeps(ctx), {
        webhookId: campaign.id,
        workspaceId: campaign.workspaceId,
        target: CAMPAIGN_TARGET,
        event,
        eventIds: [ctx.ids.next()],
        body,
      });
    },
  };
}

/**
 * The pacer's next run as a queued job keyed by (campaign, run number): queued twice it is one
 * job. It starts when the model of time says it is due, but never sleeps longer than
 * `CAMPAIGN_PACER_MAX_SLEEP_SECONDS` before looking again (quiet hours, a far start time).
 */
function pacerSchedule(outbox: ReturnType<typeof messagingStores>['outbox'], ctx: PluginContext): PacerSchedule {
  return {
    async wake(campaignId, tick, at) {
      const maxSleep = ctx.config.campaignPacerMaxSleepSeconds ?? 60;
      const seconds = Math.min(maxSleep, Math.max(0, (at.getTime() - ctx.clock.now().getTime()) / 1000));
      await outbox.enqueue(CAMPAIGN_RUN_QUEUE, { campaignId, tick }, { dedupeKey: `${campaignId}:${tick}`, startAfterSeconds: seconds > 0 ? seconds : undefined });
    },
  };
}
