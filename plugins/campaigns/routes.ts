import { t } from 'elysia';
import { authenticatedRoutes, authErrors, OneOf, PageOf, PageQuery, presentPage, StandardError } from '../kernel/http.ts';
import type { PluginContext } from '../kernel/context.ts';
import { DELIVERY_HISTORY_ROUTE, presentDelivery } from '../kernel/webhooks.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { pageRequest } from '../../core/shared/pagination.ts';
import { badRequest } from '../../core/shared/errors.ts';
import { CAMPAIGN_STATUSES } from '../../core/campaigns/campaign-status.ts';
import { mediaSendLimitsText } from '../../core/media/media-limits.ts';
import { REPORTED_RECIPIENT_STATUSES, type Campaign, type CampaignProgress } from '../../core/campaigns/campaign.ts';
import {
  cancelCampaign,
  createCampaign,
  deleteCampaign,
  getCampaign,
  launchCampaign,
  listCampaigns,
  listRecipients,
  pauseCampaign,
  resumeCampaign,
  type CampaignInput,
  type CampaignStores,
} from '../../core/campaigns/campaigns.ts';
import { MAX_AUDIENCE } from '../../core/campaigns/audience.ts';
import { campaignDeps, campaignStores } from './use-case-stores.ts';
import { optOutStore } from './campaign-store.ts';
import { addOptOut, listOptOuts, removeOptOut } from '../../core/campaigns/opt-outs.ts';
import { deliveryStore } from '../kernel/webhooks.ts';
import { campaignView, recipientView } from './views.ts';
import { CampaignBody, CampaignView, OptOutView, RecipientView } from './request-schemas.ts';

const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };
const Conflict = { 409: StandardError };
const NoBody = t.Optional(t.Object({}, { description: 'No fields; the body may be left out', additionalProperties: true }));

/**
 * Campaigns (spec 1.3, 8; the bodies are ours, written into the OpenAPI document): create (and
 * launch), list, read with progress and credits, recipients with their delivery status, pause,
 * resume, cancel, delete, and the delivery history of the campaign's webhook.
 */
export function campaignRoutes(ctx: PluginContext) {
  const deps = campaignDeps(ctx);
  const present = async (s: CampaignStores, campaign: Campaign, progress?: CampaignProgress) => {
    const reservation = campaign.reservationId ? await s.credits.findReservation(campaign.reservationId) : undefined;
    return campaignView(campaign, progress ?? (await s.recipients.progress(campaign.id)), reservation);
  };
  // Actions are POSTs: 201 like every POST (spec 7.1, "201 Created; default for POST").
  const transition = (work: (s: CampaignStores, actor: Actor, id: string) => Promise<Campaign>) => async ({ actor, params, set }: { actor: Actor; params: { id: string }; set: { status?: number | string } }) => {
    const view = await ctx.storage.transaction(campaignStores, async (s) => present(s, await work(s, actor, params.id)));
    set.status = 201;
    return view;
  };

  return authenticatedRoutes(ctx, { name: 'plugins.campaigns', prefix: '/v3/campaigns', tags: ['Campaigns'], role: 'messages.send' })
    .get(
      '/opt-outs',
      async ({ actor, query }) => presentPage(await listOptOuts(ctx.storage.read(optOutStore), actor, pageRequest(query)), (o) => ({ ...o, createdAt: o.createdAt.toISOString() })),
      { query: PageQuery, response: { ...authErrors, 200: PageOf(OptOutView) }, detail: { summary: 'Numbers that receive no campaign, newest first (`s` searches the number)' } },
    )
    .post(
      '/opt-outs',
      async ({ actor, body, set }) => {
        const added = await addOptOut(ctx.storage.read(optOutStore), ctx, actor, body);
        set.status = 201;
        return { ...added, createdAt: added.createdAt.toISOString() };
      },
      {
        body: t.Object({ phone: t.String(), reason: t.Optional(t.String({ description: 'Why (up to 200 characters)' })) }),
        response: { ...authErrors, 201: OptOutView },
        detail: { summary: 'Put a number on the opt-out list (an opt-out received elsewhere); idempotent' },
      },
    )
    .delete(
      '/opt-outs/:phone',
      async ({ actor, params }) => {
        await removeOptOut(ctx.storage.read(optOutStore), actor, params.phone);
        return { phone: params.phone, deleted: true as const };
      },
      {
        params: t.Object({ phone: t.String() }),
        response: { ...authErrors, ...NotFound, 200: t.Object({ phone: t.String(), deleted: t.Literal(true) }) },
        detail: { summary: 'Take a number off the opt-out list (the contact asked for campaigns again)' },
      },
    )
    .post(
      '',
      async ({ actor, body, set }) => {
        const input = await withResolvedAudience(ctx, actor, body as CampaignInput & { audience: Record<string, unknown> });
        const created = await ctx.storage.transaction(campaignStores, async (s) => {
          const result = await createCampaign(s, deps, actor, input);
          return { ...(await present(s, result.campaign, result.progress)), duplicates: result.duplicates };
        });
        set.status = 201;
        return created;
      },
      {
        body: CampaignBody,
        response: { ...authErrors, ...NotFound, 201: t.Composite([CampaignView, t.Object({ duplicates: t.Integer({ description: 'Repeated numbers left out of the audience' }) })]), 413: StandardError, 422: StandardError },
        detail: {
          summary: 'Create a campaign; unless `draft`, its credits are reserved for the whole audience and it starts (Owner, Admin, Manager)',
          description:
            `One message to many recipients on one connection. The audience is exactly one of \`numbers\`, \`recipients\` (with variables), \`csv\` (a header row; the \`phone\` column holds the number, the others are variables) or \`helpdeskContacts: { labels }\` (helpdesk plugin). Numbers are normalised to E.164; repeated numbers are kept once, invalid ones and numbers that opted out are listed but never sent or charged. At most ${MAX_AUDIENCE} recipients. ` +
            'Placeholders `{{name}}` or `{{name|fallback}}` in the message are filled per recipient; a recipient missing a variable without fallback is invalid. ' +
            'A template known on the connection must be APPROVED (422) and its components must fit it (400), as on any template send; launching a draft checks it again. ' +
            'One credit per recipient to send to is reserved in the same transaction: if the plan cannot cover them all, 403 `USER_PLAN_EXCEEDED_MESSAGES` and nothing is created. ' +
            `Media messages: ${mediaSendLimitsText()}`,
        },
      },
    )
    .get(
      '',
      async ({ actor, query }) => {
        const s = ctx.storage.read(campaignStores);
        const found = await listCampaigns(s, actor, { ...pageRequest(query), status: query.status, connectionId: query.connectionId });
        return { ...found, data: await Promise.all(found.data.map((c) => present(s, c))) };
      },
      {
        query: t.Composite([PageQuery, t.Object({ status: t.Optional(OneOf(CAMPAIGN_STATUSES)), connectionId: t.Optional(t.String()) })]),
        response: { ...authErrors, 200: PageOf(CampaignView) },
        detail: { summary: 'Campaigns of the workspace, newest first (`s` searches the name)' },
      },
    )
    .get(
      '/:id',
      async ({ actor, params }) => {
        const s = ctx.storage.read(campaignStores);
        const { campaign, progress } = await getCampaign(s, actor, params.id);
        return present(s, campaign, progress);
      },
      { params: Id, response: { ...authErrors, ...NotFound, 200: CampaignView }, detail: { summary: 'A campaign with its progress counts and credits' } },
    )
    .get(
      '/:id/recipients',
      async ({ actor, params, query }) => {
        const found = await listRecipients(ctx.storage.read(campaignStores), actor, params.id, { ...pageRequest(query, 1000), status: query.status });
        return { ...found, data: found.data.map(recipientView) };
      },
      {
        params: Id,
        query: t.Composite([PageQuery, t.Object({ status: t.Optional(OneOf(REPORTED_RECIPIENT_STATUSES)) })]),
        response: { ...authErrors, ...NotFound, 200: PageOf(RecipientView) },
        detail: { summary: 'Recipients in audience order with their status and error (`per_page` up to 1000; `s` searches the number)' },
      },
    )
    .post('/:id/launch', transition((s, actor, id) => launchCampaign(s, deps, actor, id)), {
      params: Id,
      body: NoBody,
      response: { ...authErrors, ...NotFound, ...Conflict, 201: CampaignView, 422: StandardError },
      detail: { summary: 'Launch a draft: reserve its credits (403 USER_PLAN_EXCEEDED_MESSAGES when the plan cannot cover them) and start now or at its start time; a template message whose template is no longer APPROVED is 422' },
    })
    .post('/:id/pause', transition((s, actor, id) => pauseCampaign(s, deps, actor, id)), {
      params: Id,
      body: NoBody,
      response: { ...authErrors, ...NotFound, ...Conflict, 201: CampaignView },
      detail: { summary: 'Pause: no new sends; sends already handed to the network finish' },
    })
    .post('/:id/resume', transition((s, actor, id) => resumeCampaign(s, deps, actor, id)), {
      params: Id,
      body: NoBody,
      response: { ...authErrors, ...NotFound, ...Conflict, 201: CampaignView },
      detail: { summary: 'Resume a paused campaign from where it stopped' },
    })
    .post(
      '/:id/cancel',
      async ({ actor, params, set }) => {
        const view = await ctx.storage.transaction(campaignStores, async (s) => {
          const { campaign, refunded } = await cancelCampaign(s, deps, actor, params.id);
          return { ...(await present(s, campaign)), refunded };
        });
        set.status = 201;
        return view;
      },
      {
        params: Id,
        body: NoBody,
        response: { ...authErrors, ...NotFound, ...Conflict, 201: t.Composite([CampaignView, t.Object({ refunded: t.Integer({ description: 'Credits of recipients never sent, given back now' }) })]) },
        detail: { summary: 'Cancel: recipients not yet sent to never are, and exactly their credits go back to the plan' },
      },
    )
    .delete(
      '/:id',
      async ({ actor, params }) => {
        await ctx.storage.transaction(campaignStores, (s) => deleteCampaign(s, actor, params.id));
        return { id: params.id, deleted: true as const };
      },
      {
        params: Id,
        response: { ...authErrors, ...NotFound, ...Conflict, 200: t.Object({ id: t.String(), deleted: t.Literal(true) }) },
        detail: { summary: 'Delete a draft or a finished campaign (cancel an active one first)' },
      },
    )
    .get(
      '/:id/deliveries',
      async ({ actor, params, query }) => {
        const { campaign } = await getCampaign(ctx.storage.read(campaignStores), actor, params.id);
        const found = await ctx.storage.read(deliveryStore).list(campaign.id, pageRequest(query));
        return { ...found, data: found.data.map(presentDelivery) };
      },
      { ...DELIVERY_HISTORY_ROUTE, detail: { summary: "Delivery history of the campaign's webhook: each event with its attempts" } },
    );
}

/** `helpdeskContacts` and any other plugin audience, read through the enabled plugins' sources. */
async function withResolvedAudience(ctx: PluginContext, actor: Actor, body: CampaignInput & { audience: Record<string, unknown> }): Promise<CampaignInput> {
  const audience = body.audience ?? {};
  const builtIn = ['numbers', 'recipients', 'csv'];
  const other = Object.keys(audience).filter((key) => !builtIn.includes(key) && audience[key] !== undefined);
  if (other.length === 0) return body;
  if (other.length > 1 || builtIn.some((key) => audience[key] !== undefined)) {
    throw badRequest(['body.audience must have exactly one of numbers, recipients, csv or helpdeskContacts']);
  }
  const source = ctx.audienceSources?.get(other[0]!);
  if (!source) throw badRequest([`body.audience.${other[0]} is not available: it needs the helpdesk plugin`]);
  const resolvedRecipients = await ctx.storage.read((db) => source(db, actor.workspaceId, audience[other[0]!]));
  return { ...body, audience: {}, resolvedRecipients };
}
