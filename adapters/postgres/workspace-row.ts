import type { Kysely } from 'kysely';
import { isUuid } from '../../core/shared/ids.ts';
import { findRow, lockRow, type RowKey, type ToEntity } from './keyed-row.ts';

/**
 * A workspace's row of `table` by id, mapped to its entity (`findInWorkspace`), or locked until the
 * caller's transaction ends (`lockInWorkspace`); undefined when there is none there. An id that is
 * not a UUID finds nothing without asking (Postgres would refuse to compare it).
 */
export const findInWorkspace = inWorkspace(findRow);
export const lockInWorkspace = inWorkspace(lockRow);

/** A read of one row keyed by workspace and UUID `id`. */
function inWorkspace(read: typeof findRow) {
  return <DB, T extends keyof DB & string, E>(db: Kysely<DB>, table: T, workspaceId: string, id: string, toEntity: ToEntity<DB, T, E>): Promise<E | undefined> =>
    isUuid(id) ? read(db, table, { workspace_id: workspaceId, id } as RowKey<DB, T>, toEntity) : Promise.resolve(undefined);
}
