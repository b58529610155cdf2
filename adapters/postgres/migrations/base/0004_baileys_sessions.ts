import { sql, type Kysely } from 'kysely';
import { createdNow, belongsTo, onePer } from '../../../../plugins/kernel/table-columns.ts';

/**
 * Sessions of the unofficial network driver (adapters/drivers/baileys), kept in the database so
 * any worker can take a session over:
 *
 * - `connection_leases`: which worker owns the live session of a connection, until when. A worker
 *   takes a lease when there is none, when it expired, or when it is already its own; it renews
 *   it while the session runs. Generic: any driver with a long-lived session may use it.
 * - `baileys_auth`: the session's authentication state: the credentials (`kind = 'creds'`) and
 *   the Signal keys (`kind` = key type, `key_id` = key id), as JSON with binary values encoded
 *   the way the library's own file store does (BufferJSON).
 * - `baileys_messages`: raw messages the session saw or sent, so media can be fetched, replies
 *   quoted, reactions addressed and retries answered after a restart; `album_id` numbers the
 *   items of an album when the network does not. Pruned by age.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connection_leases')
    .$call(onePer('connection_id', 'connections'))
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('acquired_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('baileys_auth')
    .$call(belongsTo('connection_id', 'connections'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('baileys_auth_pk', ['connection_id', 'kind', 'key_id'])
    .execute();

  await db.schema
    .createTable('baileys_messages')
    .$call(belongsTo('connection_id', 'connections'))
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('remote_jid', 'text', (c) => c.notNull())
    .addColumn('from_me', 'boolean', (c) => c.notNull())
    .addColumn('has_media', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('album_id', 'text')
    .addColumn('raw', 'text', (c) => c.notNull())
    .$call(createdNow)
    .addPrimaryKeyConstraint('baileys_messages_pk', ['connection_id', 'message_id'])
    .execute();
  await db.schema.createIndex('baileys_messages_created_idx').on('baileys_messages').column('created_at').execute();
  await db.schema
    .createIndex('baileys_messages_album_idx')
    .on('baileys_messages')
    .columns(['connection_id', 'album_id'])
    .where(sql.ref('album_id'), 'is not', null)
    .execute();
}
