import type { EventSubscriber } from '../kernel/plugin.ts';
import type { PluginEventPayload } from '../kernel/events.ts';
import { followConnection, noteContactReply, replyText } from '../../core/campaigns/replies.ts';
import { campaignDeps, campaignStores, campaignUnitOfWork } from './use-case-stores.ts';

/**
 * A contact's message marks their campaign message replied and may opt them out (stop word); a
 * connection going down pauses its running campaigns, coming back resumes them, and its deletion
 * fails them and gives their credits back.
 */
export const CAMPAIGN_SUBSCRIBERS: EventSubscriber[] = [
  {
    event: 'messages.upsert',
    async handle(payload, ctx) {
      const event = payload as PluginEventPayload & { data: { key?: { remoteJid?: string; fromMe?: boolean }; messageType?: string; message?: Record<string, any>; messageTimestamp?: number } };
      const jid = event.remoteJid ?? event.data?.key?.remoteJid;
      if (!event.connectionId || !jid || event.data?.key?.fromMe || !jid.endsWith('@s.whatsapp.net')) return;
      const at = ctx.clock.now();
      await ctx.storage.transaction(campaignStores, (stores) =>
        noteContactReply(stores, { workspaceId: event.workspaceId, connectionId: event.connectionId!, from: jid, text: replyText(event.data), at }),
      );
    },
  },
  {
    event: 'connection.update',
    async handle(payload, ctx) {
      const event = payload as PluginEventPayload & { data: { to?: string; connectionId?: string } };
      const connectionId = event.connectionId ?? event.data?.connectionId;
      if (!connectionId || typeof event.data?.to !== 'string') return;
      await followConnection(campaignUnitOfWork(ctx), campaignDeps(ctx), { connectionId, to: event.data.to });
    },
  },
];
