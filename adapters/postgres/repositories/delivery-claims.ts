import { sql, type Kysely } from 'kysely';
import type { AttemptRecord, ClaimedDelivery, DeliveryClaims } from '../../../core/webhooks/delivery-engine.ts';
import { amongPicked, pickedKeys } from '../any-of.ts';
import { compiledOnce } from '../compiled-once.ts';
import type { Database } from '../schema.ts';
import { toDelivery } from './webhook-store.ts';

/**
 * Deliveries as their own queue (migration 0011): claims take due rows with `FOR UPDATE SKIP
 * LOCKED`, so workers never wait on each other's batches; every write afterwards is guarded by
 * the claim id, so a worker whose lease lapsed (and was taken over) records nothing. Each
 * statement runs once or more per batch: it has one shape whatever the batch (ids and per-row
 * values as array parameters), compiled once, and Postgres plans one statement text.
 */
export function deliveryClaims(db: Kysely<Database>): DeliveryClaims {
  return {
    async claim(request) {
      const { rows } = await claimDue(db, request.claimId, request.claimedUntil, request.due, request.wallClock, [...request.skipWebhooks], request.limit);
      return rows
        .map((row): ClaimedDelivery => ({ ...toDelivery(row), claimId: request.claimId, claimedUntil: request.claimedUntil }))
        .sort((a, b) => a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime());
    },

    async renew(held, claimedUntil) {
      if (held.length === 0) return new Set();
      const { rows } = await renewClaims(
        db,
        held.map((d) => d.id),
        held.map((d) => d.claimId),
        claimedUntil,
      );
      return new Set(rows.map((row) => row.id));
    },

    async record(attempts, updatedAt) {
      if (attempts.length === 0) return new Set();
      // One statement for the batch: each delivery its own state, counters and due time (joined
      // from arrays), and a history row for every attempt it recorded, numbered by the update.
      const { rows } = await recordAttempts(
        db,
        attempts.map((a) => a.delivery.id),
        attempts.map((a) => a.delivery.claimId),
        attempts.map((a) => a.next.state),
        attempts.map((a) => a.next.attempts),
        attempts.map((a) => a.nextAttemptAt?.toISOString() ?? null),
        attempts.map((a) => a.at.toISOString()),
        attempts.map((a) => ('status' in a.outcome ? a.outcome.status : null)),
        attempts.map((a) => ('error' in a.outcome ? a.outcome.error : null)),
        attempts.map((a) => a.durationMs),
        updatedAt,
      );
      return new Set(rows.map((row) => row.delivery_id));
    },

    async release(held, how, now) {
      if (held.length === 0) return;
      const ids = held.map((d) => d.id);
      const claims = held.map((d) => d.claimId);
      if (how === 'settle') await settleClaims(db, ids, claims, now);
      else await releaseClaims(db, ids, claims);
    },
  };
}

/** The ids and claim ids of held deliveries, as a table: `held(id, claim_id)`. */
const heldRows = (ids: string[], claims: string[]) =>
  sql<{ id: string; claim_id: string }>`unnest(${ids}::uuid[], ${claims}::uuid[])`.as<'held'>(sql`held(id, claim_id)`);

const claimDue = compiledOnce(
  (db: Kysely<Database>, claimId: string, claimedUntil: Date, due: Date, wallClock: Date, skipWebhooks: string[], limit: number) =>
    db
      .with(
        'picked',
        pickedKeys(
          db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('next_attempt_at', '<=', due)
            .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<', wallClock)]))
            // Webhooks whose slots are full this turn wait (an empty list skips none).
            .where('webhook_id', '<>', sql<string>`all(${skipWebhooks}::uuid[])`)
            .orderBy('next_attempt_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        ),
      )
      .updateTable('webhook_deliveries')
      .from('picked')
      .set({ claim_id: claimId, claimed_until: claimedUntil })
      .where(amongPicked('webhook_deliveries.id'))
      .returningAll('webhook_deliveries'),
);

const renewClaims = compiledOnce((db: Kysely<Database>, ids: string[], claims: string[], claimedUntil: Date) =>
  db
    .updateTable('webhook_deliveries')
    .from(heldRows(ids, claims))
    .set({ claimed_until: claimedUntil })
    .whereRef('webhook_deliveries.id', '=', 'held.id')
    .whereRef('webhook_deliveries.claim_id', '=', 'held.claim_id')
    .returning('webhook_deliveries.id'),
);

/**
 * The attempts' outcomes on the deliveries still claimed by the same claim, and their history rows
 * (the attempt's number is the delivery's count after the update), in one statement: a delivery
 * whose claim lapsed records neither.
 */
const recordAttempts = compiledOnce(
  (
    db: Kysely<Database>,
    ids: string[],
    claims: string[],
    states: string[],
    attempts: number[],
    nextAttemptAts: Array<string | null>,
    ats: string[],
    statuses: Array<number | null>,
    errors: Array<string | null>,
    durations: number[],
    updatedAt: Date,
  ) =>
    db
      .with('recorded', (w) =>
        w
          .updateTable('webhook_deliveries')
          .from(
            sql<{ id: string; claim_id: string; state: string; attempts: number; next_attempt_at: Date | null; at: Date; status_code: number | null; error: string | null; duration_ms: number }>`unnest(${ids}::uuid[], ${claims}::uuid[], ${states}::text[], ${attempts}::int[], ${nextAttemptAts}::timestamptz[], ${ats}::timestamptz[], ${statuses}::int[], ${errors}::text[], ${durations}::int[])`.as<'done'>(
              sql`done(id, claim_id, state, attempts, next_attempt_at, at, status_code, error, duration_ms)`,
            ),
          )
          .set((eb) => ({
            state: eb.ref('done.state'),
            attempts: eb.ref('done.attempts'),
            attempts_made: eb('webhook_deliveries.attempts_made', '+', 1),
            next_attempt_at: eb.ref('done.next_attempt_at'),
            claim_id: null,
            claimed_until: null,
            updated_at: updatedAt,
          }))
          .whereRef('webhook_deliveries.id', '=', 'done.id')
          .whereRef('webhook_deliveries.claim_id', '=', 'done.claim_id')
          .returning(['webhook_deliveries.id', 'webhook_deliveries.attempts_made', 'done.at', 'done.status_code', 'done.error', 'done.duration_ms']),
      )
      .insertInto('webhook_attempts')
      .columns(['delivery_id', 'attempt', 'at', 'status_code', 'error', 'duration_ms'])
      .expression((eb) => eb.selectFrom('recorded').select(['recorded.id', 'recorded.attempts_made', 'recorded.at', 'recorded.status_code', 'recorded.error', 'recorded.duration_ms']))
      .returning('webhook_attempts.delivery_id'),
);

const releaseClaims = compiledOnce((db: Kysely<Database>, ids: string[], claims: string[]) =>
  db
    .updateTable('webhook_deliveries')
    .from(heldRows(ids, claims))
    .set({ claim_id: null, claimed_until: null })
    .whereRef('webhook_deliveries.id', '=', 'held.id')
    .whereRef('webhook_deliveries.claim_id', '=', 'held.claim_id'),
);

const settleClaims = compiledOnce((db: Kysely<Database>, ids: string[], claims: string[], now: Date) =>
  db
    .updateTable('webhook_deliveries')
    .from(heldRows(ids, claims))
    .set({ claim_id: null, claimed_until: null, next_attempt_at: null, updated_at: now })
    .whereRef('webhook_deliveries.id', '=', 'held.id')
    .whereRef('webhook_deliveries.claim_id', '=', 'held.claim_id'),
);
