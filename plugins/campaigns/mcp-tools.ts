import { t } from 'elysia';
import { defineTool, type McpToolDefinition } from '../kernel/mcp.ts';
import { CAMPAIGN_STATUSES } from '../../core/campaigns/campaign-status.ts';
import { cancelCampaign, createCampaign, getCampaign, listCampaigns, pauseCampaign, resumeCampaign, type CampaignStores } from '../../core/campaigns/campaigns.ts';
import type { Campaign } from '../../core/campaigns/campaign.ts';
import { MAX_PER_PAGE } from '../../core/shared/pagination.ts';
import type { PluginContext } from '../kernel/context.ts';
import { OneOf } from '../kernel/http.ts';
import { campaignDeps, campaignStores } from './use-case-stores.ts';
import { campaignView } from './views.ts';

/**
 * Campaigns through MCP: an assistant creates a campaign to a list of numbers and watches it
 * (progress counts, credits), and can pause, resume or cancel it. Same use cases as the REST
 * routes, as the caller: the roles matrix (Owner, Admin, Manager) and the plan's credits apply.
 */

const campaignId = t.String({ minLength: 1, description: 'Id of the campaign (from create_campaign or list_campaigns)' });

async function viewOf(s: CampaignStores, campaign: Campaign) {
  const reservation = campaign.reservationId ? await s.credits.findReservation(campaign.reservationId) : undefined;
  return campaignView(campaign, await s.recipients.progress(campaign.id), reservation);
}

function summary(view: Awaited<ReturnType<typeof viewOf>>): string {
  const p = view.progress;
  return `Campaign "${view.name}" is ${view.status}: ${p.sent} sent (${p.delivered} delivered, ${p.read} read), ${p.queued} queued, ${p.sending} sending, ${p.failed} failed, ${p.replied} replied; credits reserved ${view.credits.reserved}, consumed ${view.credits.consumed}, refunded ${view.credits.refunded}.`;
}

export const createCampaignTool = defineTool({
  name: 'create_campaign',
  title: 'Create a campaign',
  description:
    'Sends one text message to many numbers on a connection, paced so the number is not flagged. One credit per recipient is reserved at once; ' +
    'if the plan cannot cover them all nothing is created. {{name}} placeholders are filled from each recipient\'s variables. Starts now unless startAt is given.',
  scopes: ['messages:send'],
  input: t.Object({
    name: t.String({ minLength: 1, maxLength: 200, description: 'A name to recognise the campaign by' }),
    connectionId: t.String({ minLength: 1, description: 'The connection that sends (see the connections tools)' }),
    text: t.String({ minLength: 1, maxLength: 4096, description: 'The message; {{variable}} or {{variable|fallback}} placeholders allowed' }),
    recipients: t.Array(
      t.Object({ phone: t.String({ description: 'International format, e.g. +5511999999999' }), variables: t.Optional(t.Record(t.String(), t.String())) }),
      { minItems: 1, maxItems: 10_000, description: 'Who receives it; repeated numbers are sent once' },
    ),
    messagesPerMinute: t.Optional(t.Integer({ minimum: 1, maximum: 6000, description: 'Pace; default 20 per minute on unofficial numbers' })),
    startAt: t.Optional(t.String({ description: 'ISO 8601 instant with offset to start later' })),
  }),
  async run({ name, connectionId, text, recipients, messagesPerMinute, startAt }, { actor, ctx }) {
    const view = await ctx.storage.transaction(campaignStores, async (s) => {
      const created = await createCampaign(s, campaignDeps(ctx), actor, {
        name,
        connectionId,
        message: { text },
        audience: { recipients },
        schedule: startAt ? { startAt } : undefined,
        pace: messagesPerMinute ? { messagesPerMinute } : undefined,
      });
      return { ...(await viewOf(s, created.campaign)), duplicates: created.duplicates };
    });
    return { structured: { campaign: view }, summary: summary(view) };
  },
});

export const getCampaignTool = defineTool({
  name: 'get_campaign',
  title: 'Watch a campaign',
  description: 'A campaign\'s status, progress counts (queued, sending, sent, delivered, read, failed, replied, opted out) and credits. Call again to follow it.',
  scopes: ['messages:send'],
  input: t.Object({ campaignId }),
  annotations: { readOnlyHint: true },
  async run({ campaignId }, { actor, ctx }) {
    const s = ctx.storage.read(campaignStores);
    const { campaign } = await getCampaign(s, actor, campaignId);
    const view = await viewOf(s, campaign);
    return { structured: { campaign: view }, summary: summary(view) };
  },
});

export const listCampaignsTool = defineTool({
  name: 'list_campaigns',
  title: 'List campaigns',
  description: 'Campaigns of the workspace, newest first, with their status and progress.',
  scopes: ['messages:send'],
  input: t.Object({
    status: t.Optional(OneOf(CAMPAIGN_STATUSES, { description: 'Only campaigns in this status' })),
    page: t.Optional(t.Integer({ minimum: 1 })),
    perPage: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PER_PAGE })),
  }),
  annotations: { readOnlyHint: true },
  async run({ status, page, perPage }, { actor, ctx }) {
    const s = ctx.storage.read(campaignStores);
    const found = await listCampaigns(s, actor, { page: page ?? 1, perPage: perPage ?? 10, search: undefined, status });
    const campaigns = await Promise.all(found.data.map((c) => viewOf(s, c)));
    return { structured: { campaigns, total: found.total, page: found.currentPage, totalPages: found.totalPages }, summary: `${found.total} campaign(s).` };
  },
});

const action = (name: string, title: string, description: string, run: typeof pauseCampaign) =>
  defineTool({
    name,
    title,
    description,
    scopes: ['messages:send'],
    input: t.Object({ campaignId }),
    async run({ campaignId }, { actor, ctx }) {
      const view = await ctx.storage.transaction(campaignStores, async (s) => viewOf(s, await run(s, campaignDeps(ctx), actor, campaignId)));
      return { structured: { campaign: view }, summary: summary(view) };
    },
  });

export const pauseCampaignTool = action('pause_campaign', 'Pause a campaign', 'Stops new sends; resume_campaign continues from where it stopped.', pauseCampaign);
export const resumeCampaignTool = action('resume_campaign', 'Resume a campaign', 'Continues a paused campaign.', resumeCampaign);
export const cancelCampaignTool = action(
  'cancel_campaign',
  'Cancel a campaign',
  'Stops the campaign for good: recipients not yet sent to never are, and their credits go back to the plan.',
  async (s, deps, actor, id) => (await cancelCampaign(s, deps, actor, id)).campaign,
);

export const CAMPAIGN_MCP_TOOLS: McpToolDefinition[] = [createCampaignTool, getCampaignTool, listCampaignsTool, pauseCampaignTool, resumeCampaignTool, cancelCampaignTool];
