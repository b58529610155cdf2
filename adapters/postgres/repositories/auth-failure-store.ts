import type { ExpressionBuilder, Kysely } from 'kysely';
import { admitAttempt, entryKey, windowCutoff, type FailureCount, type FailureStore } from '../../../core/security/auth-throttle.ts';
import type { Database } from '../schema.ts';

type Row = { kind: string; key: string; failures: number; started_at: Date | string; updated_at: Date | string; blocked_until: Date | string | null };
type Entry = { kind: string; key: string };

const toCount = (row: Omit<Row, 'kind' | 'key'>): FailureCount => ({
  failures: row.failures,
  startedAt: new Date(row.started_at),
  updatedAt: new Date(row.updated_at),
  blockedUntil: row.blocked_until === null ? null : new Date(row.blocked_until),
});

/**
 * Failure counts in `auth_failures` (migration 0014), shared by every server process.
 * `record` is one upsert: the row starts over (count 1) once its window has passed, else its
 * count goes up by one. `admit` decides in a transaction holding the keys' rows.
 */
export function authFailureStore(db: Kysely<Database>): FailureStore & { prune(idleSince: Date, kept?: { kind: string; idleSince: Date }): Promise<void> } {
  const matching = (entries: Entry[]) => (eb: ExpressionBuilder<Database, 'auth_failures'>) => eb.or(entries.map(({ kind, key }) => eb.and([eb('kind', '=', kind), eb('key', '=', key)])));
  return {
    async record({ kind, key, policy }, now) {
      const cutoff = windowCutoff(policy, now);
      const row = await db
        .insertInto('auth_failures')
        .values({ kind, key, failures: 1, started_at: now, updated_at: now, blocked_until: null })
        .onConflict((oc) =>
          oc.columns(['kind', 'key']).doUpdateSet((eb) => ({
            failures: eb.case().when('auth_failures.started_at', '<=', cutoff).then(1).else(eb('auth_failures.failures', '+', 1)).end(),
            started_at: eb.case().when('auth_failures.started_at', '<=', cutoff).then(now).else(eb.ref('auth_failures.started_at')).end(),
            updated_at: now,
          })),
        )
        .returning(['failures', 'started_at', 'updated_at', 'blocked_until'])
        .executeTakeFirstOrThrow();
      return toCount(row);
    },

    async admit(entries, now) {
      return db.transaction().execute(async (trx) => {
        await trx
          .insertInto('auth_failures')
          .values(entries.map(({ kind, key }) => ({ kind, key, failures: 0, started_at: now, updated_at: now, blocked_until: null })))
          .onConflict((oc) => oc.columns(['kind', 'key']).doNothing())
          .execute();
        const rows = await trx.selectFrom('auth_failures').selectAll().where(matching(entries)).forUpdate().execute();
        const byKey = new Map(rows.map((row) => [entryKey(row.kind, row.key), toCount(row)]));
        const next: Array<Entry & { count: FailureCount }> = [];
        let wait = 0;
        for (const entry of entries) {
          const stored = byKey.get(entryKey(entry.kind, entry.key));
          const decision = admitAttempt(entry.policy, stored && stored.failures > 0 ? stored : undefined, now);
          if (decision.admitted) next.push({ ...entry, count: decision.count });
          else wait = Math.max(wait, decision.waitMs);
        }
        if (wait > 0) return { admitted: false as const, waitMs: wait };
        for (const { kind, key, count } of next) {
          await trx
            .updateTable('auth_failures')
            .set({ failures: count.failures, started_at: count.startedAt, updated_at: count.updatedAt, blocked_until: count.blockedUntil })
            .where('kind', '=', kind)
            .where('key', '=', key)
            .execute();
        }
        return { admitted: true as const };
      });
    },

    async forgive(entries) {
      if (entries.length === 0) return;
      await db
        .updateTable('auth_failures')
        .set((eb) => ({ failures: eb('failures', '-', 1) }))
        .where(matching(entries))
        .where('failures', '>', 0)
        .execute();
    },

    async clear(entries) {
      if (entries.length > 0) await db.deleteFrom('auth_failures').where(matching(entries)).execute();
    },

    async read(entries) {
      const counts = new Map<string, FailureCount>();
      if (entries.length === 0) return counts;
      const rows = await db.selectFrom('auth_failures').selectAll().where(matching(entries)).execute();
      for (const row of rows) counts.set(entryKey(row.kind, row.key), toCount(row));
      return counts;
    },

    /** Rows idle since `idleSince`, and those of `kind` (kept longer) idle since `longIdleSince`. */
    async prune(idleSince, kept?: { kind: string; idleSince: Date }) {
      await db
        .deleteFrom('auth_failures')
        .where((eb) =>
          kept
            ? eb.or([eb.and([eb('kind', '<>', kept.kind), eb('updated_at', '<', idleSince)]), eb('updated_at', '<', kept.idleSince)])
            : eb('updated_at', '<', idleSince),
        )
        .execute();
    },
  };
}
