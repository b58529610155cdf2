import type { ConnectionTable, EventSubscriber } from '../kernel/plugin.ts';
import type { PluginEventPayload } from '../kernel/events.ts';
import { followConnection, isStopRequest, noteContactReply, replyText } from '../../core/campaigns/replies.ts';
import { normalizePhone } from '../../core/campaigns/audience.ts';
import { contactsAwaitingReply } from './campaign-store.ts';
import { campaignDeps, campaignStores, campaignUnitOfWork } from './use-case-stores.ts';

/** The connections some campaign of the workspace was made on (index `campaigns_connection_idx`). */
const CAMPAIGN_CONNECTIONS: ConnectionTable = { table: 'campaigns', workspaceColumn: 'workspace_id', connectionColumn: 'connection_id' };

/**
 * A contact's message marks their campaign message replied and may opt them out (stop word); a
 * connection going down pauses its running campaigns, coming back resumes them, and its deletion
 * fails them and gives their credits back.
 */
export const CAMPAIGN_SUBSCRIBERS: EventSubscriber[] = [
  {
    event: 'messages.upsert',
    async handle(payload, ctx) {
      const reply = contactReply(payload as ReplyEvent);
      if (!reply) return;
      const at = ctx.clock.now();
      await ctx.storage.transaction(campaignStores, (stores) => noteContactReply(stores, { ...reply, at }));
    },
    // Most messages answer no campaign and ask nothing: one read for the batch finds the others.
    async select(payloads, ctx) {
      const replies = (payloads as ReplyEvent[]).flatMap((event) => {
        const reply = contactReply(event);
        return reply ? [{ eventId: event.eventId, ...reply }] : [];
      });
      const stopping = replies.filter((r) => r.text !== null && isStopRequest(r.text));
      const others = replies.filter((r) => !stopping.includes(r));
      const awaiting = await ctx.storage.read((db) => contactsAwaitingReply(db, others.flatMap((r) => phoneOf(r))));
      return new Set([...stopping, ...others.filter((r) => phoneOf(r).some((c) => awaiting.has(`${c.connectionId}|${c.phone}`)))].map((r) => r.eventId));
    },
    // Only a connection that has had a campaign has campaign messages a reply marks; a stop word
    // opts the number out of the workspace's campaigns whatever connection it was written to.
    onlyOnConnectionsIn: CAMPAIGN_CONNECTIONS,
    alsoWhen(data) {
      const text = replyText(data as ReplyEvent['data']);
      return text !== null && isStopRequest(text);
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

type ReplyEvent = PluginEventPayload & { data: { key?: { remoteJid?: string; fromMe?: boolean }; messageType?: string; message?: Record<string, any>; messageTimestamp?: number } };

/** A contact's message to a connection, as `noteContactReply` takes it; none for the account's own or a group's. */
function contactReply(event: ReplyEvent): { workspaceId: string; connectionId: string; from: string; text: string | null } | undefined {
  const jid = event.remoteJid ?? event.data?.key?.remoteJid;
  if (!event.connectionId || !jid || event.data?.key?.fromMe || !jid.endsWith('@s.whatsapp.net')) return undefined;
  return { workspaceId: event.workspaceId, connectionId: event.connectionId, from: jid, text: replyText(event.data) };
}

function phoneOf(reply: { connectionId: string; from: string }): Array<{ connectionId: string; phone: string }> {
  const phone = normalizePhone(reply.from);
  return phone ? [{ connectionId: reply.connectionId, phone }] : [];
}
