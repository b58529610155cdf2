import type { Kysely, Selectable } from 'kysely';
import { isUuid } from '../../core/shared/ids.ts';

/** A table whose rows belong to one workspace and are named by a UUID `id`. */
type WorkspaceRows = { id: string; workspace_id: string };

/**
 * A workspace's row of `table` by id, mapped to its entity; undefined when there is none there.
 * An id that is not a UUID finds nothing without asking (Postgres would refuse to compare it).
 */
export async function findInWorkspace<DB, T extends keyof DB & string, E>(
  db: Kysely<DB>,
  table: T,
  workspaceId: string,
  id: string,
  toEntity: (row: Selectable<DB[T]>) => E | Promise<E>,
): Promise<E | undefined> {
  if (!isUuid(id)) return undefined;
  // Kysely cannot name the columns of a table chosen by a type parameter: the two this reads are stated.
  const rows = db as unknown as Kysely<{ table: WorkspaceRows }>;
  const row = await rows.selectFrom(table as unknown as 'table').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return row && toEntity(row as Selectable<DB[T]>);
}
