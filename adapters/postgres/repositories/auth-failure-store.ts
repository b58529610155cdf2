import type { Kysely } from 'kysely';
import { entryKey, resetCutoff, type FailureCount, type FailureStore } from '../../../core/security/auth-throttle.ts';
import type { Database } from '../schema.ts';

/**
 * Failure counts in `auth_failures` (migration 0013). A failure is one upsert: the row starts
 * over (count 1) when its window or quiet period has passed, else its count goes up by one.
 */
export function authFailureStore(db: Kysely<Database>): FailureStore & { prune(before: Date): Promise<void> } {
  const toCount = (row: { failures: number; started_at: Date | string; updated_at: Date | string }): FailureCount => ({
    failures: row.failures,
    startedAt: new Date(row.started_at),
    updatedAt: new Date(row.updated_at),
  });
  return {
    async record(entries, now) {
      const counts = new Map<string, FailureCount>();
      // One statement per policy's cutoff (the callers pass one to three keys, mostly one).
      for (const { kind, key, policy } of entries) {
        const cutoff = resetCutoff(policy, now);
        const column = cutoff.column === 'startedAt' ? 'auth_failures.started_at' : 'auth_failures.updated_at';
        const row = await db
          .insertInto('auth_failures')
          .values({ kind, key, failures: 1, started_at: now, updated_at: now })
          .onConflict((oc) =>
            oc.columns(['kind', 'key']).doUpdateSet((eb) => ({
              failures: eb.case().when(column, '<=', cutoff.before).then(1).else(eb('auth_failures.failures', '+', 1)).end(),
              started_at: eb.case().when(column, '<=', cutoff.before).then(now).else(eb.ref('auth_failures.started_at')).end(),
              updated_at: now,
            })),
          )
          .returning(['failures', 'started_at', 'updated_at'])
          .executeTakeFirstOrThrow();
        counts.set(entryKey(kind, key), toCount(row));
      }
      return counts;
    },
    async read(entries) {
      const counts = new Map<string, FailureCount>();
      if (entries.length === 0) return counts;
      const rows = await db
        .selectFrom('auth_failures')
        .select(['kind', 'key', 'failures', 'started_at', 'updated_at'])
        .where((eb) => eb.or(entries.map(({ kind, key }) => eb.and([eb('kind', '=', kind), eb('key', '=', key)]))))
        .execute();
      for (const row of rows) counts.set(entryKey(row.kind, row.key), toCount(row));
      return counts;
    },
    async clear(entries) {
      if (entries.length === 0) return;
      await db
        .deleteFrom('auth_failures')
        .where((eb) => eb.or(entries.map(({ kind, key }) => eb.and([eb('kind', '=', kind), eb('key', '=', key)]))))
        .execute();
    },
    async prune(before) {
      await db.deleteFrom('auth_failures').where('updated_at', '<', before).execute();
    },
  };
}
