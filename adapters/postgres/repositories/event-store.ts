import type { Kysely } from 'kysely';
import type { EventPublisher } from '../../../core/connections/connection.ts';
import type { IdGen, Clock } from '../../../core/shared/ports.ts';
import type { Database } from '../schema.ts';
import type { Outbox } from '../../../core/shared/outbox.ts';

/** The worker runs the enabled plugins' subscribers of one event (apps/plugin-events.ts). */
export const PLUGIN_EVENTS_QUEUE = 'plugins.events';

/**
 * The durable event log: written in the transaction of the change that caused the event, with
 * its place in the webhooks' fan-out queue and its plugin-subscriber job (the transactional outbox).
 */
export function eventPublisher(db: Kysely<Database>, deps: { ids: IdGen; clock: Clock; pluginEvents?: ReadonlySet<string> }, outbox: Outbox): EventPublisher {
  return {
    async publish(e) {
      const id = deps.ids.next();
      const event = db.insertInto('events').values({
        id,
        workspace_id: e.workspaceId,
        connection_id: e.connectionId || null,
        event: e.event,
        remote_jid: e.remoteJid,
        payload: { event: e.event, connectionId: e.connectionId, remoteJid: e.remoteJid, sender: e.sender, data: e.data },
        created_at: deps.clock.now(),
      });
      // connection.update is never dispatched (spec 6.1); every other event may have subscribers:
      // it waits for the delivery engine's fan-out, written in the same statement as the event.
      if (e.connectionId && e.event !== 'connection.update') {
        await db
          .with('logged', () => event.returning('id'))
          .insertInto('webhook_fanout')
          .columns(['event_id'])
          .expression((eb) => eb.selectFrom('logged').select('logged.id'))
          .execute();
      } else {
        await event.execute();
      }
      // Plugin subscribers: one job per event some enabled plugin listens to, committed with the
      // event (a crash loses neither) and deduplicated by the event id (queued once).
      if (deps.pluginEvents?.has(e.event)) await outbox.enqueue(PLUGIN_EVENTS_QUEUE, { eventId: id }, { dedupeKey: id });
    },
  };
}
