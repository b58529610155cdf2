import type { Kysely, Selectable } from 'kysely';
import { amongPicked, anyOf, pickedKeys } from '../any-of.ts';
import { compiledOnce } from '../compiled-once.ts';
import { eventsById } from './event-store.ts';
import type { Database, EventsTable } from '../schema.ts';

/** An event taken for the plugins' subscribers under one claim. */
export interface ClaimedPluginEvent {
  event: Selectable<EventsTable>;
  /** Runs before this one that threw. */
  attempts: number;
}

/**
 * The plugins' event queue (migration 0012): due rows claimed in batches with `FOR UPDATE SKIP
 * LOCKED` under a lease (wall-clock time); every later write is guarded by the claim, so a
 * worker whose lease lapsed and was taken over changes nothing.
 */
export function pluginEventQueue(db: Kysely<Database>) {
  return {
    async claim(request: { claimId: string; now: Date; claimedUntil: Date; limit: number }): Promise<ClaimedPluginEvent[]> {
      const { rows: claimed } = await claimDue(db, request.claimId, request.claimedUntil, request.now, request.limit);
      if (claimed.length === 0) return [];
      const attempts = new Map(claimed.map((c) => [c.event_id, c.attempts]));
      const { rows: events } = await eventsById(db, [...attempts.keys()]);
      // An event gone with its workspace has no one left to tell.
      const gone = [...attempts.keys()].filter((id) => !events.some((e) => e.id === id));
      if (gone.length > 0) await this.done(request.claimId, gone);
      return events.map((event) => ({ event, attempts: attempts.get(event.id)! }));
    },

    /** The events whose subscribers all ran: off the queue. */
    async done(claimId: string, eventIds: readonly string[]): Promise<void> {
      if (eventIds.length === 0) return;
      await deleteDone(db, claimId, eventIds);
    },

    /** Events of this claim that were not run (the worker stops): anyone's to claim at once. */
    async release(claimId: string, eventIds: readonly string[]): Promise<void> {
      if (eventIds.length === 0) return;
      await releaseClaimed(db, claimId, eventIds);
    },

    /** An event whose subscriber threw: due again at `dueAt`. */
    async retry(claimId: string, eventId: string, dueAt: Date): Promise<void> {
      await db
        .updateTable('plugin_event_queue')
        .set((eb) => ({ attempts: eb('attempts', '+', 1), due_at: dueAt, claim_id: null, claimed_until: null }))
        .where('event_id', '=', eventId)
        .where('claim_id', '=', claimId)
        .execute();
    },
  };
}

// Every batch of plugin events runs these: each has one text whatever the batch, compiled once
// (event ids go as one array).

const claimDue = compiledOnce((db: Kysely<Database>, claimId: string, claimedUntil: Date, now: Date, limit: number) =>
  db
    .with(
      'picked',
      pickedKeys(
        db
          .selectFrom('plugin_event_queue')
          .select('event_id')
          .where('due_at', '<=', now)
          .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<', now)]))
          .orderBy('due_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      ),
    )
    .updateTable('plugin_event_queue')
    .from('picked')
    .set({ claim_id: claimId, claimed_until: claimedUntil })
    .where(amongPicked('plugin_event_queue.event_id'))
    .returning(['plugin_event_queue.event_id', 'plugin_event_queue.attempts']),
);

const deleteDone = compiledOnce((db: Kysely<Database>, claimId: string, eventIds: readonly string[]) =>
  db.deleteFrom('plugin_event_queue').where('event_id', '=', anyOf(eventIds, 'uuid')).where('claim_id', '=', claimId),
);

const releaseClaimed = compiledOnce((db: Kysely<Database>, claimId: string, eventIds: readonly string[]) =>
  db.updateTable('plugin_event_queue').set({ claim_id: null, claimed_until: null }).where('event_id', '=', anyOf(eventIds, 'uuid')).where('claim_id', '=', claimId),
);
