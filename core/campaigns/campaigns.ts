import type { Actor, IdentityStore } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import type { ConnectionStore } from '../connections/connection.ts';
import { connectionNotFound } from '../connections/connections.ts';
import type { NetworkDriver } from '../connections/driver.ts';
import type { ZoneRules } from '../helpdesk/sla/business-hours.ts';
import { sendableMedia, type MediaStore } from '../media/media.ts';
import type { ChatStore, MessageStore } from '../messaging/message.ts';
import type { SendDeps } from '../messaging/send.ts';
import { assertOutboundMedia, isMediaKind, parseOutgoingContent, type OutgoingContent } from '../messaging/outgoing.ts';
import { releaseCredits, reserveCredits, type CreditStore } from '../plans/metering.ts';
import { badRequest, coded, excerpt, conflict, notFound, unprocessable } from '../shared/errors.ts';
import type { Outbox } from '../shared/outbox.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { buildAudience, normalizePhone, placeholdersOf, recipientsFromCsv, type RawRecipient } from './audience.ts';
import type { Campaign, CampaignNotifier, CampaignProgress, CampaignStore, OptOutStore, PacerSchedule, RecipientStore, RecipientView, ReportedRecipientStatus } from './campaign.ts';
import { ACTIVE_STATUSES, nextCampaignStatus, type CampaignStatus } from './campaign-status.ts';
import { minutesOf, OFFICIAL_MESSAGES_PER_MINUTE, sendingHours, type Pace } from './pacing.ts';
import { parseStartTime } from './start-time.ts';
import { checkTemplateSendOn, type SendableTemplates } from '../templates/template-send.ts';
import { assertOutboundAllowed, type OutboundPolicy } from '../shared/outbound-policy.ts';

export interface CampaignStores {
  campaigns: CampaignStore;
  recipients: RecipientStore;
  optOuts: OptOutStore;
  connections: ConnectionStore;
  credits: CreditStore;
  identity: IdentityStore;
  media: MediaStore;
  messages: MessageStore;
  chats: ChatStore;
  outbox: Outbox;
  notifier: CampaignNotifier;
  pacer: PacerSchedule;
  /** The connection's stored templates: a template campaign is held to the rule of every template send. */
  templates: SendableTemplates;
}

/** What every send needs (template components checked as on any template send), and the pacer's own. */
export interface CampaignDeps extends SendDeps {
  zones: ZoneRules;
  /** A uniform number in [0, 1) from the Random port: the pacer's jitter. */
  fraction: () => number;
  outbound: OutboundPolicy;
}

/** What a person asks for; the HTTP layer has checked the types, the rules are checked here. */
export interface CampaignInput {
  name: string;
  connectionId: string;
  /** One message field, as in a send request: `{ text }`, `{ image: { url, caption } }`, `{ template }`… */
  message: Record<string, unknown>;
  audience: { numbers?: unknown[]; recipients?: RawRecipient[]; csv?: string };
  /** Recipients a plugin's audience source found (helpdesk contacts by label). */
  resolvedRecipients?: RawRecipient[];
  schedule?: { startAt?: string | null; timezone?: string | null };
  pace?: { messagesPerMinute?: number | null; jitterSeconds?: number; quietHours?: { from: string; to: string; timezone?: string } | null };
  webhook?: { url: string; secret?: string | null } | null;
  /** Save without reserving credits or sending; launch later. */
  draft?: boolean;
}

export interface CreatedCampaign {
  campaign: Campaign;
  progress: CampaignProgress;
  /** Repeated numbers left out. */
  duplicates: number;
}

/** Default pace of an unofficial number: one message every 3 s, plus up to 5 s at random. */
export const UNOFFICIAL_DEFAULT_PACE = { messagesPerMinute: 20, jitterSeconds: 5 };
export const MAX_MESSAGES_PER_MINUTE = 6_000;
export const MAX_JITTER_SECONDS = 600;

/**
 * Creates a campaign. Unless it is a draft it is launched in the same transaction: the credits of
 * every recipient to send to are reserved (USER_PLAN_EXCEEDED_MESSAGES and nothing is created
 * when the plan cannot cover them) and it starts now or waits for its start time.
 */
export async function createCampaign(stores: CampaignStores, deps: CampaignDeps, actor: Actor, input: CampaignInput): Promise<CreatedCampaign> {
  authorize(actor.roles, 'messages.send', 'write');
  const connection = await stores.connections.get(actor.workspaceId, input.connectionId);
  if (!connection) throw connectionNotFound(input.connectionId);
  const driver = deps.drivers.get(connection.driver)!;
  const message = await campaignMessage(stores, actor, driver, input.message);
  await checkCampaignTemplate(stores, deps, connection.id, message);
  const pace = campaignPace(driver, input.pace, input.schedule?.timezone ?? null, deps.zones);
  const startAt = parseStartTime(input.schedule ?? {}, deps.zones);
  const webhook = campaignWebhook(input.webhook);
  await assertOutboundMedia(deps.outbound, 'body.message', message);
  if (webhook) await assertOutboundAllowed(deps.outbound, 'body.webhook.url', webhook.url);
  const name = input.name.trim();
  if (!name || name.length > 200) throw badRequest(['body.name must be 1 to 200 characters']);

  const raw = audienceOf(input);
  const phones = raw.map((r) => normalizePhone(r.phone)).filter((p): p is string => p !== null);
  const optedOut = await stores.optOuts.among(actor.workspaceId, phones);
  const audience = buildAudience(raw, { optedOut, variablesUsed: placeholdersOf(message) });

  const now = deps.clock.now();
  const campaign: Campaign = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    connectionId: connection.id,
    name,
    status: 'DRAFT',
    message,
    startAt,
    timezone: input.schedule?.timezone ?? null,
    pace,
    reservationId: null,
    audienceSize: 0,
    statusReason: null,
    webhook,
    nextSlotAt: null,
    tick: 0,
    lastProgressAt: null,
    createdBy: actor.userId,
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    finishedAt: null,
  };
  await stores.campaigns.insert(campaign);
  await stores.recipients.insertMany(campaign.id, audience.entries);
  const launched = input.draft ? campaign : await launch(stores, deps, actor, campaign, audience.entries.filter((e) => e.status === 'QUEUED').length);
  return { campaign: launched, progress: await stores.recipients.progress(campaign.id), duplicates: audience.duplicates };
}

/** Launches a draft: reserves its audience's credits and starts it (now or at its start time). */
export async function launchCampaign(stores: CampaignStores, deps: CampaignDeps, actor: Actor, id: string): Promise<Campaign> {
  authorize(actor.roles, 'messages.send', 'write');
  const campaign = await lockedCampaign(stores, actor, id);
  nextCampaignStatus(campaign.status, 'launch_now');
  if (campaign.connectionId) await checkCampaignTemplate(stores, deps, campaign.connectionId, campaign.message);
  return launch(stores, deps, actor, campaign, await stores.recipients.countQueued(campaign.id));
}

export async function getCampaign(stores: Pick<CampaignStores, 'campaigns' | 'recipients'>, actor: Actor, id: string): Promise<{ campaign: Campaign; progress: CampaignProgress }> {
  authorize(actor.roles, 'messages.send', 'read');
  const campaign = await stores.campaigns.get(actor.workspaceId, id);
  if (!campaign) throw campaignNotFound(id);
  return { campaign, progress: await stores.recipients.progress(campaign.id) };
}

export async function listCampaigns(
  stores: Pick<CampaignStores, 'campaigns'>,
  actor: Actor,
  request: PageRequest & { status?: CampaignStatus; connectionId?: string },
): Promise<Page<Campaign>> {
  authorize(actor.roles, 'messages.send', 'read');
  return stores.campaigns.list(actor.workspaceId, request);
}

export async function listRecipients(
  stores: Pick<CampaignStores, 'campaigns' | 'recipients'>,
  actor: Actor,
  id: string,
  request: PageRequest & { status?: ReportedRecipientStatus },
): Promise<Page<RecipientView>> {
  authorize(actor.roles, 'messages.send', 'read');
  const campaign = await stores.campaigns.get(actor.workspaceId, id);
  if (!campaign) throw campaignNotFound(id);
  return stores.recipients.list(campaign.id, request);
}

/** Stops sending; sends already handed to the network finish. Nothing is refunded yet. */
export async function pauseCampaign(stores: CampaignStores, deps: Pick<CampaignDeps, 'clock'>, actor: Actor, id: string): Promise<Campaign> {
  authorize(actor.roles, 'messages.send', 'write');
  const campaign = await lockedCampaign(stores, actor, id);
  return pause(stores, deps, campaign, null);
}

/** Sends again from where it stopped (or waits for the start time if that is still ahead). */
export async function resumeCampaign(stores: CampaignStores, deps: Pick<CampaignDeps, 'clock'>, actor: Actor, id: string): Promise<Campaign> {
  authorize(actor.roles, 'messages.send', 'write');
  const campaign = await lockedCampaign(stores, actor, id);
  return resume(stores, deps, campaign);
}

/**
 * Cancels: recipients not yet sent to are never sent, and exactly their credits go back to the
 * plan at once. Sends already handed to the network finish (consuming theirs, or giving it back
 * if they fail).
 */
export async function cancelCampaign(stores: CampaignStores, deps: Pick<CampaignDeps, 'clock'>, actor: Actor, id: string): Promise<{ campaign: Campaign; refunded: number }> {
  authorize(actor.roles, 'messages.send', 'write');
  const campaign = await lockedCampaign(stores, actor, id);
  const status = nextCampaignStatus(campaign.status, 'cancel');
  const refunded = await stores.recipients.cancelQueued(campaign.id);
  if (refunded > 0 && campaign.reservationId) await releaseCredits(stores.credits, campaign.reservationId, refunded);
  const now = deps.clock.now();
  const cancelled: Campaign = { ...campaign, status, statusReason: null, tick: campaign.tick + 1, finishedAt: now, updatedAt: now };
  await stores.campaigns.update(cancelled);
  await stores.notifier.notify(cancelled, 'campaign.cancelled', await stores.recipients.progress(campaign.id));
  return { campaign: cancelled, refunded };
}

/** Deletes a draft or a finished campaign (an active one must be cancelled first: it holds credits). */
export async function deleteCampaign(stores: Pick<CampaignStores, 'campaigns'>, actor: Actor, id: string): Promise<void> {
  authorize(actor.roles, 'messages.send', 'write');
  const found = await stores.campaigns.get(actor.workspaceId, id);
  const campaign = found && (await stores.campaigns.lock(found.id));
  if (!campaign) throw campaignNotFound(id);
  if (ACTIVE_STATUSES.includes(campaign.status)) throw conflict(`The campaign is ${campaign.status}; cancel it before deleting it`);
  await stores.campaigns.delete(campaign.id);
}

export const campaignNotFound = (id: string) => coded('not_found', 'CAMPAIGN_NOT_FOUND', `No campaign ${id} in this workspace`);

// ---------------------------------------------------------------------------------------------
// Transitions shared with the pacer and the connection's reactions.

export async function pause(stores: CampaignStores, deps: Pick<CampaignDeps, 'clock'>, campaign: Campaign, reason: string | null): Promise<Campaign> {
  const status = nextCampaignStatus(campaign.status, 'pause');
  const now = deps.clock.now();
  const paused: Campaign = { ...campaign, status, statusReason: reason, tick: campaign.tick + 1, updatedAt: now };
  await stores.campaigns.update(paused);
  await stores.notifier.notify(paused, 'campaign.paused', await stores.recipients.progress(campaign.id));
  return paused;
}

export async function resume(stores: CampaignStores, deps: Pick<CampaignDeps, 'clock'>, campaign: Campaign): Promise<Campaign> {
  const now = deps.clock.now();
  const later = campaign.startAt !== null && campaign.startAt > now && campaign.startedAt === null;
  const status = nextCampaignStatus(campaign.status, later ? 'resume_later' : 'resume');
  // A fresh start for the pacer: slots missed while paused are not sent in a burst.
  const resumed: Campaign = { ...campaign, status, statusReason: null, tick: campaign.tick + 1, nextSlotAt: null, updatedAt: now };
  await stores.campaigns.update(resumed);
  await stores.pacer.wake(resumed.id, resumed.tick, later ? campaign.startAt! : now);
  await stores.notifier.notify(resumed, 'campaign.resumed', await stores.recipients.progress(campaign.id));
  return resumed;
}

/**
 * The campaign cannot go on (its connection was deleted): it fails, queued recipients are
 * cancelled and every credit still reserved goes back, including those of sends in flight, whose
 * messages went with the connection.
 */
export async function failCampaign(stores: CampaignStores, deps: Pick<CampaignDeps, 'clock'>, campaign: Campaign, reason: string): Promise<Campaign> {
  const status = nextCampaignStatus(campaign.status, 'fail');
  await stores.recipients.cancelQueued(campaign.id);
  if (campaign.reservationId) {
    const reservation = await stores.credits.lockReservation(campaign.reservationId);
    const left = reservation && reservation.status === 'OPEN' ? reservation.amount - reservation.consumed - reservation.refunded : 0;
    if (left > 0) await releaseCredits(stores.credits, campaign.reservationId, left);
  }
  const now = deps.clock.now();
  const failed: Campaign = { ...campaign, status, statusReason: reason, tick: campaign.tick + 1, finishedAt: now, updatedAt: now };
  await stores.campaigns.update(failed);
  await stores.notifier.notify(failed, 'campaign.failed', await stores.recipients.progress(campaign.id));
  return failed;
}

async function launch(stores: CampaignStores, deps: CampaignDeps, actor: Actor, campaign: Campaign, toSend: number): Promise<Campaign> {
  if (toSend === 0) throw unprocessable('None of the campaign\'s recipients can be sent to (see the recipient list for why); nothing was launched');
  const connection = campaign.connectionId ? await stores.connections.get(actor.workspaceId, campaign.connectionId) : undefined;
  if (!connection) throw connectionNotFound(campaign.connectionId ?? '');
  const now = deps.clock.now();
  const later = campaign.startAt !== null && campaign.startAt > now;
  const status = nextCampaignStatus(campaign.status, later ? 'launch_later' : 'launch_now');
  const reservationId = deps.ids.next();
  const launched: Campaign = {
    ...campaign,
    status,
    reservationId,
    audienceSize: toSend,
    tick: campaign.tick + 1,
    startedAt: later ? null : now,
    updatedAt: now,
  };
  await stores.campaigns.update(launched);
  await stores.pacer.wake(launched.id, launched.tick, later ? campaign.startAt! : now);
  if (!later) await stores.notifier.notify(launched, 'campaign.started', await stores.recipients.progress(campaign.id));
  // Reserved last: the credit account's row lock is then held only until the commit.
  const plan = async () => (await stores.identity.getWorkspace(actor.workspaceId))!.plan;
  await reserveCredits(stores.credits, deps, { id: actor.workspaceId, plan }, toSend, `campaign:${campaign.id}`, reservationId);
  return launched;
}

async function lockedCampaign(stores: Pick<CampaignStores, 'campaigns'>, actor: Actor, id: string): Promise<Campaign> {
  const found = await stores.campaigns.get(actor.workspaceId, id);
  const campaign = found && (await stores.campaigns.lock(found.id));
  if (!campaign) throw campaignNotFound(id);
  return campaign;
}

/**
 * A template campaign is held to the rule of every template send (core/templates/template-send.ts):
 * a template known on the connection must be APPROVED and its components must fit it — checked
 * when the campaign is created and when a draft is launched.
 */
async function checkCampaignTemplate(stores: Pick<CampaignStores, 'templates'>, deps: Pick<CampaignDeps, 'templateComponents'>, connectionId: string, message: OutgoingContent) {
  if (message.kind === 'template') await checkTemplateSendOn(stores.templates, deps.templateComponents, connectionId, message.template);
}

async function campaignMessage(stores: Pick<CampaignStores, 'media' | 'identity'>, actor: Actor, driver: NetworkDriver, body: Record<string, unknown>): Promise<OutgoingContent> {
  if (!body || typeof body !== 'object') throw badRequest(['body.message must be an object with one message field']);
  const content = parseOutgoingContent(body);
  if (content.kind === 'reaction') throw badRequest(['body.message cannot be a reaction: a campaign starts new messages']);
  if (content.kind === 'template' && !driver.capabilities.templates) throw unprocessable('Templates can only be sent on official connections');
  if (driver.capabilities.official) {
    // spec 5.4: official campaigns require a paid plan.
    const workspace = await stores.identity.getWorkspace(actor.workspaceId);
    if (workspace && workspace.plan === 'FREE') throw coded('forbidden', 'USER_PLAN_OFFICIAL_CONNECTIONS', 'Campaigns on official connections are available on paid plans (PRO).');
  }
  if (isMediaKind(content.kind)) {
    const source = (content as Record<string, any>)[content.kind] as { mediaId?: string };
    if (source.mediaId) await sendableMedia(stores.media, actor.workspaceId, source.mediaId, content.kind);
  }
  return content;
}

function campaignPace(driver: NetworkDriver, input: CampaignInput['pace'], scheduleZone: string | null, zones: ZoneRules): Pace {
  const official = driver.capabilities.official;
  const problems: string[] = [];
  let perMinute = input?.messagesPerMinute === undefined ? (official ? OFFICIAL_MESSAGES_PER_MINUTE : UNOFFICIAL_DEFAULT_PACE.messagesPerMinute) : input.messagesPerMinute;
  if (perMinute !== null && (!Number.isInteger(perMinute) || perMinute < 1 || perMinute > MAX_MESSAGES_PER_MINUTE)) {
    problems.push(`body.pace.messagesPerMinute must be a whole number from 1 to ${MAX_MESSAGES_PER_MINUTE}, or null for no pacing`);
  }
  // The network's per-number throughput ceiling bounds official numbers whatever was asked.
  if (official && (perMinute === null || perMinute > OFFICIAL_MESSAGES_PER_MINUTE)) perMinute = OFFICIAL_MESSAGES_PER_MINUTE;
  const jitterSeconds = input?.jitterSeconds ?? (official || perMinute === null ? 0 : UNOFFICIAL_DEFAULT_PACE.jitterSeconds);
  if (!Number.isInteger(jitterSeconds) || jitterSeconds < 0 || jitterSeconds > MAX_JITTER_SECONDS) problems.push(`body.pace.jitterSeconds must be a whole number from 0 to ${MAX_JITTER_SECONDS}`);
  let quietHours: Pace['quietHours'] = null;
  if (input?.quietHours) {
    const { from, to } = input.quietHours;
    const timezone = input.quietHours.timezone ?? scheduleZone ?? 'UTC';
    if (Number.isNaN(minutesOf(from)) || Number.isNaN(minutesOf(to))) problems.push('body.pace.quietHours.from and .to must be times of day as HH:MM');
    else if (sendingHours({ from, to, timezone: 'UTC' }).week[0]!.length === 0) problems.push('body.pace.quietHours cannot cover the whole day: nothing would ever be sent');
    if (!validZone(zones, timezone)) problems.push(`body.pace.quietHours.timezone "${excerpt(timezone)}" is not an IANA time zone`);
    quietHours = { from, to, timezone };
  }
  if (problems.length > 0) throw badRequest(problems);
  return { messagesPerMinute: perMinute, jitterSeconds, quietHours };
}

export function validZone(zones: ZoneRules, zone: string): boolean {
  try {
    zones.offsetMinutes(zone, 0);
    return true;
  } catch {
    return false;
  }
}

function campaignWebhook(input: CampaignInput['webhook']): Campaign['webhook'] {
  if (!input) return null;
  const problems: string[] = [];
  try {
    const url = new URL(input.url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') problems.push('body.webhook.url must be an http(s) URL');
  } catch {
    problems.push('body.webhook.url must be an absolute http(s) URL');
  }
  const secret = input.secret ?? null;
  if (secret !== null && (secret.length < 16 || secret.length > 256)) problems.push('body.webhook.secret must be 16 to 256 characters');
  if (problems.length > 0) throw badRequest(problems);
  return { url: input.url, secret };
}

function audienceOf(input: CampaignInput): RawRecipient[] {
  const sources = [input.audience?.numbers, input.audience?.recipients, input.audience?.csv, input.resolvedRecipients].filter((s) => s !== undefined);
  if (sources.length !== 1) throw badRequest(['body.audience must have exactly one of numbers, recipients, csv or helpdeskContacts']);
  if (input.audience.numbers) return input.audience.numbers.map((phone) => ({ phone }));
  if (input.audience.recipients) return input.audience.recipients;
  if (input.audience.csv !== undefined) return recipientsFromCsv(input.audience.csv);
  return input.resolvedRecipients!;
}
