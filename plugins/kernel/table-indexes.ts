/**
 * The indexes many tables share, for migrations (the base's and the plugins'), named after their
 * table. Frozen like the migrations that use them: a builder's DDL must never change (see
 * table-columns.ts); another shape of index gets a new builder, or is spelt out.
 */
import type { Kysely } from 'kysely';

/** `<table>_workspace_idx` on `workspace_id`: a workspace's rows, found without a scan. */
export async function indexByWorkspace(db: Kysely<any>, table: string): Promise<void> {
  await db.schema.createIndex(`${table}_workspace_idx`).on(table).column('workspace_id').execute();
}

/** `<table>_workspace_idx` on `(workspace_id, created_at)`: a workspace's rows listed in creation order. */
export async function indexWorkspaceListing(db: Kysely<any>, table: string): Promise<void> {
  await db.schema.createIndex(`${table}_workspace_idx`).on(table).columns(['workspace_id', 'created_at']).execute();
}
