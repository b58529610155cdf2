import type { Kysely } from 'kysely';
import type { EventPublisher } from '../../../core/connections/connection.ts';
import type { IdGen, Clock } from '../../../core/shared/ports.ts';
import type { Database } from '../schema.ts';

/** The durable event log: written in the transaction of the change that caused the event. */
export function eventPublisher(db: Kysely<Database>, deps: { ids: IdGen; clock: Clock }): EventPublisher {
  return {
    async publish(e) {
      await db
        .insertInto('events')
        .values({
          id: deps.ids.next(),
          workspace_id: e.workspaceId,
          connection_id: e.connectionId || null,
          event: e.event,
          remote_jid: e.remoteJid,
          payload: { event: e.event, connectionId: e.connectionId, remoteJid: e.remoteJid, sender: e.sender, data: e.data },
          created_at: deps.clock.now(),
        })
        .execute();
    },
  };
}
