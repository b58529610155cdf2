/**
 * The indexes many tables share, for migrations (the base's and the plugins'): the rows of one
 * parent (a workspace, a user, a conversation…), named `<table>_<parent>_idx` after it. Frozen like
 * the migrations that use them: a builder's DDL must never change (see table-columns.ts); another
 * shape of index gets a new builder, or is spelt out.
 */
import type { Kysely } from 'kysely';

/** `<table>_<parent>_idx` on `<parent>_id`: the rows of one parent, found without a scan. */
export async function indexBy(db: Kysely<any>, table: string, parent: string): Promise<void> {
  await db.schema.createIndex(`${table}_${parent}_idx`).on(table).column(`${parent}_id`).execute();
}

/** `<table>_<parent>_idx` on `(<parent>_id, <time>)`: the rows of one parent in time order (its lists, its ranges). */
export async function indexInOrder(db: Kysely<any>, table: string, parent: string, time = 'created_at'): Promise<void> {
  await db.schema.createIndex(`${table}_${parent}_idx`).on(table).columns([`${parent}_id`, time]).execute();
}
