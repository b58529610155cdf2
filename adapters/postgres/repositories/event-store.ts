import type { Kysely } from 'kysely';
import type { EventPublisher } from '../../../core/connections/connection.ts';
import type { IdGen, Clock } from '../../../core/shared/ports.ts';
import type { Database } from '../schema.ts';

/**
 * The job queue of plugin events queued before they waited in `plugin_event_queue` (and of
 * events whose batch run failed): the worker runs the subscribers of one event per job.
 */
export const PLUGIN_EVENTS_QUEUE = 'plugins.events';

/**
 * The durable event log: written in the transaction of the change that caused the event, with
 * its place in the webhooks' fan-out queue and the plugins' event queue (the transactional outbox).
 */
export function eventPublisher(db: Kysely<Database>, deps: { ids: IdGen; clock: Clock; pluginEvents?: ReadonlySet<string> }): EventPublisher {
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
      // connection.update is never dispatched (spec 6.1); every other event may have webhook
      // subscribers: it waits for the delivery engine's fan-out. An event some enabled plugin
      // listens to waits for the plugins' subscribers (apps/plugin-events.ts). Both places are
      // written in the event's own statement, so they commit with it (a crash loses neither).
      const toWebhooks = Boolean(e.connectionId) && e.event !== 'connection.update';
      const toPlugins = deps.pluginEvents?.has(e.event) ?? false;
      if (!toWebhooks && !toPlugins) return void (await event.execute());
      const logged = db.with('logged', () => event.returning('id'));
      if (toWebhooks && toPlugins) {
        await logged
          .with('fanout', (q) => q.insertInto('webhook_fanout').columns(['event_id']).expression((eb) => eb.selectFrom('logged').select('logged.id')))
          .insertInto('plugin_event_queue')
          .columns(['event_id'])
          .expression((eb) => eb.selectFrom('logged').select('logged.id'))
          .execute();
      }
      else if (toWebhooks) await logged.insertInto('webhook_fanout').columns(['event_id']).expression((eb) => eb.selectFrom('logged').select('logged.id')).execute();
      else await logged.insertInto('plugin_event_queue').columns(['event_id']).expression((eb) => eb.selectFrom('logged').select('logged.id')).execute();
    },
  };
}
