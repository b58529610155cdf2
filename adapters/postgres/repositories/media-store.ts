import type { Kysely } from 'kysely';
import type { MediaItem, MediaStore } from '../../../core/media/media.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import type { Database } from '../schema.ts';
import { isUuid } from '../../../core/shared/ids.ts';

/** Media bytes live in the database (bytea): durable, backed up with everything else. */
export function mediaStore(db: Kysely<Database>): MediaStore {
  return {
    async insert(item, bytes) {
      await db
        .insertInto('media')
        .values({ ...snakeCased(item), size: bytes ? bytes.length : item.size, bytes: bytes ?? null })
        .execute();
    },
    async insertMany(items) {
      if (items.length === 0) return;
      await db
        .insertInto('media')
        .values(items.map((item) => ({ ...snakeCased(item), bytes: null })))
        .execute();
    },
    async get(id) {
      if (!isUuid(id)) return undefined;
      const row = await db
        .selectFrom('media')
        .select(['id', 'workspace_id', 'connection_id', 'origin', 'driver_ref', 'mimetype', 'file_name', 'size', 'created_at'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row && (camelCased(row) satisfies MediaItem);
    },
    async bytes(id) {
      const row = await db.selectFrom('media').select('bytes').where('id', '=', id).executeTakeFirst();
      return row?.bytes ? new Uint8Array(row.bytes) : undefined;
    },
    async saveBytes(id, bytes, mimetype) {
      await db.updateTable('media').set({ bytes, size: bytes.length, mimetype }).where('id', '=', id).execute();
    },
    async useTicket(nonce, expiresAt) {
      // Forget tickets long expired: they can no longer be presented anyway.
      await db.deleteFrom('used_tickets').where('expires_at', '<', new Date(Date.now() - 86_400_000)).execute();
      const result = await db.insertInto('used_tickets').values({ nonce, expires_at: expiresAt }).onConflict((oc) => oc.column('nonce').doNothing()).executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
    },
  };
}
