import type { Kysely } from 'kysely';
import type { EventPublisher } from '../../../core/connections/connection.ts';
import type { IdGen, Clock } from '../../../core/shared/ports.ts';
import type { Database } from '../schema.ts';
import type { Outbox } from '../../../core/shared/outbox.ts';
import { FANOUT_QUEUE } from '../../../core/webhooks/dispatch.ts';

/** The worker runs the enabled plugins' subscribers of one event (apps/plugin-events.ts). */
export const PLUGIN_EVENTS_QUEUE = 'plugins.events';

/** An event as the publisher sees it, before it is stored. */
export interface PublishedEvent {
  event: string;
  workspaceId: string;
  connectionId: string | null;
  remoteJid: string | null;
}

/**
 * Whether an event can matter to a subscriber, asked in the publishing transaction (one cheap
 * query at most): a `plugins.events` job is queued only when some subscriber's answer is yes.
 */
export type EventConcern = (event: PublishedEvent, db: Kysely<Database>) => Promise<boolean>;

/** By event name, its subscribers' concerns; null for a subscriber that wants every one. */
export type PluginEventInterest = ReadonlyMap<string, ReadonlyArray<EventConcern | null>>;

/** Some subscriber of the event wants it: one without a concern, or one whose concern says yes. */
async function wanted(interest: ReadonlyArray<EventConcern | null> | undefined, event: PublishedEvent, db: Kysely<Database>): Promise<boolean> {
  if (!interest || interest.length === 0) return false;
  if (interest.includes(null)) return true;
  for (const concern of interest) if (await concern!(event, db)) return true;
  return false;
}

/**
 * The durable event log: written in the transaction of the change that caused the event, with
 * the job that fans it out to webhooks (the transactional outbox).
 */
export function eventPublisher(db: Kysely<Database>, deps: { ids: IdGen; clock: Clock; pluginEvents?: PluginEventInterest }, outbox: Outbox): EventPublisher {
  return {
    async publish(e) {
      const id = deps.ids.next();
      await db
        .insertInto('events')
        .values({
          id,
          workspace_id: e.workspaceId,
          connection_id: e.connectionId || null,
          event: e.event,
          remote_jid: e.remoteJid,
          payload: { event: e.event, connectionId: e.connectionId, remoteJid: e.remoteJid, sender: e.sender, data: e.data },
          created_at: deps.clock.now(),
        })
        .execute();
      // connection.update is never dispatched (spec 6.1); every other event may have subscribers.
      if (e.connectionId && e.event !== 'connection.update') await outbox.enqueue(FANOUT_QUEUE, { eventId: id }, { dedupeKey: id });
      // Plugin subscribers: one job per event some enabled plugin wants, committed with the
      // event (a crash loses neither) and deduplicated by the event id (queued once).
      const published = { event: e.event, workspaceId: e.workspaceId, connectionId: e.connectionId || null, remoteJid: e.remoteJid };
      if (await wanted(deps.pluginEvents?.get(e.event), published, db)) await outbox.enqueue(PLUGIN_EVENTS_QUEUE, { eventId: id }, { dedupeKey: id });
    },
  };
}
