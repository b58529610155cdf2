import { sql, type Kysely } from 'kysely';

/**
 * The table `@socket.io/postgres-adapter` and `@socket.io/postgres-emitter` use for packets that do
 * not fit in a NOTIFY (over 8000 bytes, or binary): the packet is stored here and its id notified.
 * Server processes delete rows older than 30 s. Same shape as the libraries document; created
 * here rather than by the service at start, so every process finds it and no process needs DDL
 * rights at run time. Frozen: never import app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('socket_io_attachments')
    .ifNotExists()
    .addColumn('id', 'bigserial', (c) => c.unique())
    .addColumn('created_at', 'timestamptz', (c) => c.defaultTo(sql`now()`))
    .addColumn('payload', 'bytea')
    .execute();
}
