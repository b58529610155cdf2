import type { AppContext } from '../adapters/http/context.ts';
import { PLUGIN_EVENTS_QUEUE } from '../adapters/postgres/repositories/event-store.ts';
import type { JobDefinition } from '../adapters/queue/queue.ts';
import type { Plugin } from '../plugins/plugin.ts';

/** What a subscriber receives: the stored event (spec 6.1 envelope fields) with its id and workspace. */
export interface PluginEventPayload {
  eventId: string;
  workspaceId: string;
  event: string;
  connectionId: string | null;
  remoteJid: string | null;
  sender?: string;
  data: unknown;
}

/** The events the enabled plugins subscribe to (the event store queues a job only for these). */
export function pluginEvents(plugins: Plugin[]): ReadonlySet<string> {
  return new Set(plugins.flatMap((p) => (p.subscribers ?? []).map((s) => s.event)));
}

/**
 * Runs the enabled plugins' subscribers of one event. The job is queued in the transaction that
 * appends the event (adapters/postgres/repositories/event-store.ts) with the event id as its
 * dedupe key, so it exists once per event and survives a crash. pg-boss retries a job that
 * throws, running every subscriber of the event again: subscribers are idempotent by contract
 * (the helpdesk's keys on the connection message id).
 */
export function pluginEventJobs(ctx: AppContext, plugins: Plugin[]): JobDefinition[] {
  const subscribed = plugins.flatMap((p) => p.subscribers ?? []);
  if (subscribed.length === 0) return [];
  return [
    {
      queue: PLUGIN_EVENTS_QUEUE,
      retryLimit: 5,
      retryDelay: 1,
      retryBackoff: true,
      expireInSeconds: 60,
      concurrency: 2,
      batchSize: 10,
      handle: async (data: { eventId: string }) => {
        const row = await ctx.db.selectFrom('events').selectAll().where('id', '=', data.eventId).executeTakeFirst();
        if (!row) return;
        const stored = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { sender?: string; data?: unknown };
        const payload: PluginEventPayload = {
          eventId: row.id,
          workspaceId: row.workspace_id,
          event: row.event,
          connectionId: row.connection_id,
          remoteJid: row.remote_jid,
          sender: stored.sender,
          data: stored.data,
        };
        for (const subscriber of subscribed) if (subscriber.event === row.event) await subscriber.handle(payload, ctx);
      },
    },
  ];
}
