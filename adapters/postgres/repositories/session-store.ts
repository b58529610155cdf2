import type { Kysely, Selectable } from 'kysely';
import type { SessionStore, WebSession } from '../../../core/identity/sessions.ts';
import type { Database, WebSessionsTable } from '../schema.ts';

/** Sign-in sessions (`web_sessions`): only the cookie's hash is kept. */
export function sessionStore(db: Kysely<Database>): SessionStore {
  return {
    async insert(s) {
      await db
        .insertInto('web_sessions')
        .values({
          id: s.id,
          id_hash: s.idHash,
          user_id: s.userId,
          csrf: s.csrf,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          expires_at: s.expiresAt,
          absolute_expires_at: s.absoluteExpiresAt,
          user_agent: s.userAgent,
        })
        .execute();
    },

    async findByHash(idHash) {
      const row = await db.selectFrom('web_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row && toSession(row);
    },

    async touch(id, lastSeenAt, expiresAt) {
      await db.updateTable('web_sessions').set({ last_seen_at: lastSeenAt, expires_at: expiresAt }).where('id', '=', id).execute();
    },

    async listOf(userId, now) {
      const rows = await db
        .selectFrom('web_sessions')
        .selectAll()
        .where('user_id', '=', userId)
        .where('expires_at', '>', now)
        .where('absolute_expires_at', '>', now)
        .orderBy('last_seen_at', 'desc')
        .orderBy('id')
        .execute();
      return rows.map(toSession);
    },

    async delete(userId, id) {
      const result = await db.deleteFrom('web_sessions').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async deleteAllOf(userId, keep) {
      let query = db.deleteFrom('web_sessions').where('user_id', '=', userId);
      if (keep !== undefined) query = query.where('id', '!=', keep);
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteExpiredOf(userId, now) {
      await db
        .deleteFrom('web_sessions')
        .where('user_id', '=', userId)
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('absolute_expires_at', '<=', now)]))
        .execute();
    },
  };
}

function toSession(row: Selectable<WebSessionsTable>): WebSession {
  return {
    id: row.id,
    idHash: row.id_hash,
    userId: row.user_id,
    csrf: row.csrf,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    absoluteExpiresAt: row.absolute_expires_at,
    userAgent: row.user_agent,
  };
}
