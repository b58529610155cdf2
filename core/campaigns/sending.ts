import { assertMaySend } from '../messaging/send-window.ts';
import { queueOutgoingMessages, type PreparedSend } from '../messaging/send-many.ts';
import { releaseCredits } from '../plans/metering.ts';
import { DomainError } from '../shared/errors.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { personalise } from './audience.ts';
import type { Campaign, CampaignRecipient, RecipientStatus } from './campaign.ts';
import { nextCampaignStatus } from './campaign-status.ts';
import { failCampaign, pause, type CampaignDeps, type CampaignStores } from './campaigns.ts';
import { dueSends, WINDOW_MS } from './pacing.ts';

/** The queue of pacer runs: one job per run, keyed by (campaign, run number). */
export const CAMPAIGN_RUN_QUEUE = 'campaigns.run';
/** How often a campaign whose last recipients are in flight looks whether they have finished. */
export const FINISH_CHECK_MS = 2_000;
/** At most one `campaign.progress` event per campaign this often. */
export const PROGRESS_EVERY_MS = 10_000;

/**
 * One run of a campaign's pacer, in one transaction under the campaign's row lock: hands the
 * recipients due at this moment to the messaging outbox and schedules the next run. Exactly once
 * per recipient: a recipient leaves the queue in the same transaction that stores its message
 * (keyed `campaign:<id>:<position>`, unique per connection) and queues its send, so a worker that
 * dies mid-run leaves either nothing or all of it, and the run is retried. A run whose number is
 * not the campaign's current one (a pause or another run came in between) does nothing.
 */
export async function runCampaign(uow: UnitOfWork<CampaignStores>, deps: CampaignDeps, job: { campaignId: string; tick: number }): Promise<void> {
  await uow.transaction(async (stores) => {
    let campaign = await stores.campaigns.lock(job.campaignId);
    if (!campaign || campaign.tick !== job.tick) return;
    const now = deps.clock.now();
    if (campaign.status === 'SCHEDULED') {
      if (campaign.startAt && campaign.startAt > now) return stores.pacer.wake(campaign.id, campaign.tick, campaign.startAt);
      campaign = { ...campaign, status: nextCampaignStatus(campaign.status, 'start'), startedAt: now, nextSlotAt: null, updatedAt: now };
      await stores.notifier.notify(campaign, 'campaign.started', await stores.recipients.progress(campaign.id));
    }
    if (campaign.status !== 'RUNNING') return;

    const connection = campaign.connectionId ? await stores.connections.find(campaign.connectionId) : undefined;
    if (!connection) {
      await failCampaign(stores, deps, campaign, 'connection_deleted');
      return;
    }
    if (connection.status !== 'CONNECTED') {
      await pause(stores, deps, campaign, 'connection_not_connected');
      return;
    }

    const window = await stores.recipients.sentSince(campaign.id, new Date(now.getTime() - WINDOW_MS));
    const decision = dueSends(
      campaign.pace,
      { nextSlotAt: campaign.nextSlotAt?.getTime() ?? null, sentInWindow: window.count, oldestInWindow: window.oldest?.getTime() ?? null },
      now.getTime(),
      deps.fraction,
      deps.zones,
    );
    const batch = decision.count > 0 ? await stores.recipients.nextQueued(campaign.id, decision.count) : [];
    const dispatched = await dispatch(stores, deps, campaign, connection, batch, now);

    // Slots are fractional milliseconds; stored rounded up, so a gap is never shorter than the pace.
    const nextSlotAt = new Date(Math.ceil(decision.nextSlotAt));
    const next: Campaign = { ...campaign, nextSlotAt: dispatched > 0 || decision.count === 0 ? nextSlotAt : campaign.nextSlotAt, tick: campaign.tick + 1, updatedAt: now };
    // Fewer due recipients than the pace allowed means none are left; otherwise count.
    const queueEmpty = batch.length < decision.count || (await stores.recipients.countQueued(campaign.id)) === 0;
    if (queueEmpty && (await stores.recipients.countInFlight(campaign.id)) === 0) {
      const finished: Campaign = { ...next, status: nextCampaignStatus(campaign.status, 'finish'), finishedAt: now };
      await stores.campaigns.update(finished);
      await stores.notifier.notify(finished, 'campaign.completed', await stores.recipients.progress(campaign.id));
      return;
    }
    const wakeAt = queueEmpty ? new Date(now.getTime() + FINISH_CHECK_MS) : new Date(Math.ceil(decision.wakeAt));
    const progressDue = dispatched > 0 && (campaign.lastProgressAt === null || now.getTime() - campaign.lastProgressAt.getTime() >= PROGRESS_EVERY_MS);
    const saved: Campaign = progressDue ? { ...next, lastProgressAt: now } : next;
    await stores.campaigns.update(saved);
    await stores.pacer.wake(saved.id, saved.tick, wakeAt);
    if (progressDue) await stores.notifier.notify(saved, 'campaign.progress', await stores.recipients.progress(campaign.id));
  });
}

/**
 * Sends to a batch of recipients: their messages stored and queued, or, for those who opted out
 * since the campaign was created or whose 24-hour window is closed on an official number (a
 * free-form message needs it; a template does not), no message and their credit back.
 */
async function dispatch(
  stores: CampaignStores,
  deps: CampaignDeps,
  campaign: Campaign,
  connection: { id: string; workspaceId: string; driver: string },
  batch: CampaignRecipient[],
  now: Date,
): Promise<number> {
  if (batch.length === 0) return 0;
  const optedOut = await stores.optOuts.among(campaign.workspaceId, batch.map((r) => r.phone));
  const driver = deps.drivers.get(connection.driver)!;
  const needsWindow = driver.capabilities.sendWindow && campaign.message.kind !== 'template';
  const outcomes: Array<{ position: number; status: RecipientStatus; error: string | null; messageId: string | null; at: Date }> = [];
  const sends: PreparedSend[] = [];
  for (const recipient of batch) {
    const remoteJid = `${recipient.phone}@s.whatsapp.net`;
    if (optedOut.has(recipient.phone)) {
      outcomes.push({ position: recipient.position, status: 'OPTED_OUT', error: 'the contact opted out of campaigns', messageId: null, at: now });
      continue;
    }
    if (needsWindow) {
      const closed = await windowClosed(stores, connection.id, remoteJid, now);
      if (closed) {
        outcomes.push({ position: recipient.position, status: 'SKIPPED', error: closed, messageId: null, at: now });
        continue;
      }
    }
    const id = deps.ids.next();
    sends.push({
      id,
      remoteJid,
      content: personalise(campaign.message, recipient.variables),
      idempotencyKey: `campaign:${campaign.id}:${recipient.position}`,
      reservationId: campaign.reservationId!,
      sentBy: campaign.createdBy,
    });
    outcomes.push({ position: recipient.position, status: 'DISPATCHED', error: null, messageId: id, at: now });
  }
  await queueOutgoingMessages(stores, deps, connection, sends);
  const notSent = outcomes.length - sends.length;
  if (notSent > 0) await releaseCredits(stores.credits, campaign.reservationId!, notSent);
  await stores.recipients.settle(campaign.id, outcomes);
  return sends.length;
}

async function windowClosed(stores: CampaignStores, connectionId: string, remoteJid: string, now: Date): Promise<string | null> {
  const chat = await stores.chats.get(connectionId, remoteJid);
  try {
    assertMaySend({ lastContactMessageAt: chat?.lastContactMessageAt ?? null }, now, { isTemplate: false });
    return null;
  } catch (error) {
    if (error instanceof DomainError) return 'outside the 24-hour window: only a template can start this conversation';
    throw error;
  }
}
