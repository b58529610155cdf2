import type { GaugeDefinition, PluginContext } from '../kernel/plugin.ts';
import type { DatabaseHandle } from '../kernel/storage.ts';
import { ACTIVE_STATUSES } from '../../core/campaigns/campaign-status.ts';
import { campaignsDb } from './tables.ts';

/**
 * Campaign progress for `/metrics`: campaigns by status, and the recipients of the campaigns
 * still under way (scheduled, running, paused) by their own status, so a dashboard sees a
 * campaign's queue drain. Finished campaigns' recipients are not read at each scrape.
 */
export function campaignGauges(ctx: PluginContext): GaugeDefinition[] {
  const db = ctx.storage.read((handle: DatabaseHandle) => campaignsDb(handle));
  return [
    {
      name: 'switchboard_campaigns',
      help: 'Campaigns by status',
      labelNames: ['status'],
      async read() {
        const rows = await db.selectFrom('campaigns').select('status').select((eb) => eb.fn.countAll<string>().as('n')).groupBy('status').execute();
        return rows.map((r) => ({ labels: { status: r.status }, value: Number(r.n) }));
      },
    },
    {
      name: 'switchboard_campaign_recipients_active',
      help: 'Recipients of scheduled, running and paused campaigns, by recipient status',
      labelNames: ['status'],
      async read() {
        const rows = await db
          .selectFrom('campaign_recipients as r')
          .innerJoin('campaigns as c', 'c.id', 'r.campaign_id')
          .where('c.status', 'in', [...ACTIVE_STATUSES])
          .select('r.status')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .groupBy('r.status')
          .execute();
        return rows.map((r) => ({ labels: { status: r.status }, value: Number(r.n) }));
      },
    },
  ];
}
