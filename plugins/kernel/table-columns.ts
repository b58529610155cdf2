/**
 * The columns most tables share, for migrations (the base's and the plugins'): each adds its
 * column(s) where it is called, with Kysely's `CreateTableBuilder.$call`, e.g.
 *
 *   db.schema.createTable('helpdesk_teams')
 *     .$call(workspaceRecord)
 *     .addColumn('name', 'text', (c) => c.notNull())
 *     .$call(timestamps)
 *
 * Frozen like the migrations that use them: migrations that already ran are not run again, so
 * the DDL a builder produces must never change. A table that needs another column shape gets a
 * new builder (or spells its column out), never an edited one.
 */
import { sql, type CreateTableBuilder } from 'kysely';

/** `id uuid primary key`: the row's id, chosen by the application. */
export function uuidKey<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table.addColumn('id', 'uuid', (c) => c.primaryKey());
}

/** `workspace_id`, not null: the workspace that owns the row; deleting the workspace deletes it. */
export function ownedByWorkspace<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table.addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'));
}

/** What most tables begin with: the row's `id` (`uuidKey`), then its workspace (`ownedByWorkspace`). */
export function workspaceRecord<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return ownedByWorkspace(uuidKey(table));
}

/** `created_at`, not null, written by the application. */
export function createdAt<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table.addColumn('created_at', 'timestamptz', (c) => c.notNull());
}

/** `created_at` and `updated_at`, not null, both written by the application. */
export function timestamps<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return createdAt(table).addColumn('updated_at', 'timestamptz', (c) => c.notNull());
}

/** `created_at`, not null, defaulting to the database's `now()` (the identity tables' way). */
export function createdNow<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table.addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`));
}

/** `column uuid not null` referencing `table`'s id: the row belongs to that one and is deleted with it. */
export function belongsTo<CN extends string>(column: CN, table: string) {
  return <TB extends string, C extends string>(builder: CreateTableBuilder<TB, C>) =>
    builder.addColumn(column, 'uuid', (c) => c.notNull().references(`${table}.id`).onDelete('cascade'));
}

/** `column uuid` referencing `table`'s id, set to null when that row is deleted (who or what it merely names). */
export function refersTo<CN extends string>(column: CN, table: string) {
  return <TB extends string, C extends string>(builder: CreateTableBuilder<TB, C>) =>
    builder.addColumn(column, 'uuid', (c) => c.references(`${table}.id`).onDelete('set null'));
}

/**
 * `column uuid primary key` referencing `table` (its `id`, or `key`): at most one row per row of
 * that table (its settings, its state), deleted with it.
 */
export function onePer<CN extends string>(column: CN, table: string, key = 'id') {
  return <TB extends string, C extends string>(builder: CreateTableBuilder<TB, C>) =>
    builder.addColumn(column, 'uuid', (c) => c.primaryKey().references(`${table}.${key}`).onDelete('cascade'));
}

/** `column jsonb not null default '{}'`: an object of free-form attributes, empty at first. */
export function jsonObject<CN extends string>(column: CN) {
  return <TB extends string, C extends string>(builder: CreateTableBuilder<TB, C>) =>
    builder.addColumn(column, 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`));
}
