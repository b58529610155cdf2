import type { Insertable, Kysely } from 'kysely';
import type { ConnectionEventRecord, EventPublisher } from '../../../core/connections/connection.ts';
import type { IdGen, Clock } from '../../../core/shared/ports.ts';
import type { Database, EventsTable } from '../schema.ts';

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
  async function publishMany(records: readonly ConnectionEventRecord[]) {
    // connection.update is never dispatched (spec 6.1); every other event may have webhook
    // subscribers: it waits for the delivery engine's fan-out. An event some enabled plugin
    // listens to waits for the plugins' subscribers (apps/plugin-events.ts). Both places are
    // written in the events' own statement, so they commit with them (a crash loses neither).
    const routed = new Map<string, { toWebhooks: boolean; toPlugins: boolean; rows: Insertable<EventsTable>[] }>();
    for (const e of records) {
      const toWebhooks = Boolean(e.connectionId) && e.event !== 'connection.update';
      const toPlugins = deps.pluginEvents?.has(e.event) ?? false;
      const key = `${toWebhooks}:${toPlugins}`;
      const group = routed.get(key) ?? routed.set(key, { toWebhooks, toPlugins, rows: [] }).get(key)!;
      group.rows.push({
        id: deps.ids.next(),
        workspace_id: e.workspaceId,
        connection_id: e.connectionId || null,
        event: e.event,
        remote_jid: e.remoteJid,
        payload: { event: e.event, connectionId: e.connectionId, remoteJid: e.remoteJid, sender: e.sender, data: e.data },
        created_at: deps.clock.now(),
      });
    }
    for (const { toWebhooks, toPlugins, rows } of routed.values()) {
      const events = db.insertInto('events').values(rows);
      if (!toWebhooks && !toPlugins) {
        await events.execute();
        continue;
      }
      const logged = db.with('logged', () => events.returning('id'));
      if (toWebhooks && toPlugins) {
        await logged
          .with('fanout', (q) => q.insertInto('webhook_fanout').columns(['event_id']).expression((eb) => eb.selectFrom('logged').select('logged.id')))
          .insertInto('plugin_event_queue')
          .columns(['event_id'])
          .expression((eb) => eb.selectFrom('logged').select('logged.id'))
          .execute();
      } else {
        await logged
          .insertInto(toWebhooks ? 'webhook_fanout' : 'plugin_event_queue')
          .columns(['event_id'])
          .expression((eb) => eb.selectFrom('logged').select('logged.id'))
          .execute();
      }
    }
  }

  return {
    publish: (event) => publishMany([event]),
    publishMany,
  };
}
