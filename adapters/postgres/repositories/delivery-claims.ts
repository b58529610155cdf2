import type { Kysely } from 'kysely';
import type { AttemptRecord, ClaimedDelivery, DeliveryClaims } from '../../../core/webhooks/delivery-engine.ts';
import type { Database } from '../schema.ts';
import { toDelivery } from './webhook-store.ts';

/**
 * Deliveries as their own queue (migration 0011): claims take due rows with `FOR UPDATE SKIP
 * LOCKED`, so workers never wait on each other's batches; every write afterwards is guarded by
 * the claim id, so a worker whose lease lapsed (and was taken over) records nothing.
 */
export function deliveryClaims(db: Kysely<Database>): DeliveryClaims {
  return {
    async claim(request) {
      const rows = await db
        .updateTable('webhook_deliveries')
        .set({ claim_id: request.claimId, claimed_until: request.claimedUntil })
        .where('id', 'in', (eb) => {
          let due = eb
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('next_attempt_at', '<=', request.due)
            .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<', request.wallClock)]));
          if (request.skipWebhooks.length > 0) due = due.where('webhook_id', 'not in', [...request.skipWebhooks]);
          return due.orderBy('next_attempt_at').limit(request.limit).forUpdate().skipLocked();
        })
        .returningAll()
        .execute();
      return rows
        .map((row): ClaimedDelivery => ({ ...toDelivery(row), claimId: request.claimId, claimedUntil: request.claimedUntil }))
        .sort((a, b) => a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime());
    },

    async renew(held, claimedUntil) {
      const renewed = new Set<string>();
      for (const [claimId, ids] of byClaim(held)) {
        const rows = await db
          .updateTable('webhook_deliveries')
          .set({ claimed_until: claimedUntil })
          .where('id', 'in', ids)
          .where('claim_id', '=', claimId)
          .returning('id')
          .execute();
        for (const row of rows) renewed.add(row.id);
      }
      return renewed;
    },

    async record(attempts, updatedAt) {
      // Attempts that leave their deliveries alike are one update (usually the whole batch:
      // first attempts that succeeded), then one insert of every recorded attempt's history row.
      const groups = new Map<string, AttemptRecord[]>();
      for (const a of attempts) {
        const key = `${a.delivery.claimId}|${a.next.state}|${a.next.attempts}|${a.nextAttemptAt?.getTime() ?? ''}`;
        groups.set(key, [...(groups.get(key) ?? []), a]);
      }
      return db.transaction().execute(async (trx) => {
        const numbered = new Map<string, number>();
        for (const group of groups.values()) {
          const { delivery, next, nextAttemptAt } = group[0]!;
          const rows = await trx
            .updateTable('webhook_deliveries')
            .set((eb) => ({
              state: next.state,
              attempts: next.attempts,
              attempts_made: eb('attempts_made', '+', 1),
              next_attempt_at: nextAttemptAt,
              claim_id: null,
              claimed_until: null,
              updated_at: updatedAt,
            }))
            .where('id', 'in', group.map((a) => a.delivery.id))
            .where('claim_id', '=', delivery.claimId)
            .returning(['id', 'attempts_made'])
            .execute();
          for (const row of rows) numbered.set(row.id, row.attempts_made);
        }
        const recorded = attempts.filter((a) => numbered.has(a.delivery.id));
        if (recorded.length > 0) {
          await trx
            .insertInto('webhook_attempts')
            .values(
              recorded.map((a) => ({
                delivery_id: a.delivery.id,
                attempt: numbered.get(a.delivery.id)!,
                at: a.at,
                status_code: 'status' in a.outcome ? a.outcome.status : null,
                error: 'error' in a.outcome ? a.outcome.error : null,
                duration_ms: a.durationMs,
              })),
            )
            .execute();
        }
        return new Set(numbered.keys());
      });
    },

    async release(held, how, now) {
      for (const [claimId, ids] of byClaim(held)) {
        await db
          .updateTable('webhook_deliveries')
          .set({ claim_id: null, claimed_until: null, ...(how === 'settle' && { next_attempt_at: null, updated_at: now }) })
          .where('id', 'in', ids)
          .where('claim_id', '=', claimId)
          .execute();
      }
    },
  };
}

function byClaim(held: readonly Pick<ClaimedDelivery, 'id' | 'claimId'>[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const d of held) groups.set(d.claimId, [...(groups.get(d.claimId) ?? []), d.id]);
  return groups;
}
