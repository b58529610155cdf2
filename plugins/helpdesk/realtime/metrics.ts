import type { GaugeDefinition, PluginContext } from '../../kernel/plugin.ts';
import { shownStatus } from '../../../core/helpdesk/assignment/presence.ts';
import { presenceDeps } from './presence.ts';

/**
 * Agents as their workspaces see them now (spec 3.7), over every workspace: members announced
 * online or busy, their status shown again at the scrape's time (one whose heartbeat lapsed
 * counts as offline, and offline members are not counted).
 */
export function helpdeskGauges(ctx: PluginContext): GaugeDefinition[] {
  const deps = presenceDeps(ctx);
  return [
    {
      name: 'switchboard_helpdesk_agents',
      help: 'Helpdesk members shown online or busy, across workspaces',
      labelNames: ['status'],
      async read() {
        const now = deps.clock.now();
        const counts = { online: 0, busy: 0 };
        for (const row of await deps.store.announcedLive()) {
          const status = shownStatus(row, now, deps.ttlMs);
          if (status === 'online' || status === 'busy') counts[status]++;
        }
        return Object.entries(counts).map(([status, value]) => ({ labels: { status }, value }));
      },
    },
  ];
}
