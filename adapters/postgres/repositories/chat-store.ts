import { sql, type Kysely, type Selectable } from 'kysely';
import { compiledOnce } from '../compiled-once.ts';
import type { Chat, ChatStore } from '../../../core/messaging/message.ts';
import { page, pageOffset } from '../../../core/shared/pagination.ts';
import { camelCased } from '../row-case.ts';
import type { ChatsTable, Database } from '../schema.ts';
import { containing } from '../like-pattern.ts';

/** A connection's chats: one row per contact, touched by every message in or out (the send window's clock). */
export function chatStore(db: Kysely<Database>): ChatStore {
  return {
    async get(connectionId, remoteJid) {
      const row = await db.selectFrom('chats').selectAll().where('connection_id', '=', connectionId).where('remote_jid', '=', remoteJid).executeTakeFirst();
      return row && toChat(row);
    },
    async touch(connectionId, remoteJid, { at, name, fromContact }) {
      await db
        .insertInto('chats')
        .values({ connection_id: connectionId, remote_jid: remoteJid, name: name ?? null, last_message_at: at, last_contact_message_at: fromContact ? at : null })
        .onConflict((oc) =>
          oc.columns(['connection_id', 'remote_jid']).doUpdateSet((eb) => ({
            name: name === undefined ? eb.ref('chats.name') : name,
            last_message_at: eb.fn('greatest', [eb.ref('chats.last_message_at'), eb.ref('excluded.last_message_at')]),
            // Late-arriving old messages never move the send window back (spec 3.4).
            last_contact_message_at: fromContact
              ? eb.fn('greatest', [eb.ref('chats.last_contact_message_at'), eb.ref('excluded.last_contact_message_at')])
              : eb.ref('chats.last_contact_message_at'),
          })),
        )
        .execute();
    },
    async touchMany(connectionId, touches) {
      if (touches.length === 0) return;
      // In chat order: two writes touching the same chats wait for each other, never deadlock.
      const sorted = [...touches].sort((a, b) => (a.remoteJid < b.remoteJid ? -1 : a.remoteJid > b.remoteJid ? 1 : 0));
      await touchChats(
        db,
        connectionId,
        sorted.map((t) => t.remoteJid),
        sorted.map((t) => t.name ?? null),
        sorted.map((t) => t.at.toISOString()),
        sorted.map((t) => t.contactAt?.toISOString() ?? null),
      );
    },
    async touchOutgoing(connectionId, remoteJids, at) {
      if (remoteJids.length === 0) return;
      await touchOutgoing(db, connectionId, remoteJids, at);
    },
    async list(connectionId, request) {
      let query = db.selectFrom('chats').where('connection_id', '=', connectionId);
      if (request.search) {
        const pattern = containing(request.search);
        query = query.where((eb) => eb.or([eb('remote_jid', 'ilike', pattern), eb('name', 'ilike', pattern)]));
      }
      const { total } = await query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('last_message_at', 'desc').orderBy('remote_jid').limit(request.perPage).offset(pageOffset(request)).execute();
      return page(rows.map(toChat), Number(total), request);
    },
  };
}

/** Chats in the order given (callers sort them): a chat's name and contact time kept where none is given. */
const touchChats = compiledOnce(
  (db: Kysely<Database>, connectionId: string, remoteJids: string[], names: Array<string | null>, ats: string[], contactAts: Array<string | null>) =>
    db
      .insertInto('chats')
      .columns(['connection_id', 'remote_jid', 'name', 'last_message_at', 'last_contact_message_at'])
      .expression(
        db
          .selectFrom(
            sql<{ remote_jid: string; name: string | null; last_message_at: Date; last_contact_message_at: Date | null }>`unnest(${remoteJids}::text[], ${names}::text[], ${ats}::timestamptz[], ${contactAts}::timestamptz[])`.as<'touched'>(
              sql`touched(remote_jid, name, last_message_at, last_contact_message_at)`,
            ),
          )
          .select([
            sql<string>`${connectionId}::uuid`.as('connection_id'),
            'touched.remote_jid',
            'touched.name',
            'touched.last_message_at',
            'touched.last_contact_message_at',
          ]),
      )
      .onConflict((oc) =>
        oc.columns(['connection_id', 'remote_jid']).doUpdateSet((eb) => ({
          name: eb.fn.coalesce(eb.ref('excluded.name'), eb.ref('chats.name')),
          last_message_at: eb.fn('greatest', [eb.ref('chats.last_message_at'), eb.ref('excluded.last_message_at')]),
          // greatest() skips nulls: a chat with no contact message here keeps its send window,
          // and late-arriving old messages never move it back (spec 3.4).
          last_contact_message_at: eb.fn('greatest', [eb.ref('chats.last_contact_message_at'), eb.ref('excluded.last_contact_message_at')]),
        })),
      ),
);

/** New chats get no name and no contact time (their columns' null). */
const touchOutgoing = compiledOnce((db: Kysely<Database>, connectionId: string, remoteJids: string[], at: Date) =>
  db
    .insertInto('chats')
    .columns(['connection_id', 'remote_jid', 'last_message_at'])
    .expression(
      db
        .selectFrom(sql<{ remote_jid: string }>`unnest(${remoteJids}::text[])`.as<'touched'>(sql`touched(remote_jid)`))
        .select([sql<string>`${connectionId}::uuid`.as('connection_id'), 'touched.remote_jid', sql<Date>`${at}::timestamptz`.as('last_message_at')]),
    )
    .onConflict((oc) =>
      oc.columns(['connection_id', 'remote_jid']).doUpdateSet((eb) => ({
        last_message_at: eb.fn('greatest', [eb.ref('chats.last_message_at'), eb.ref('excluded.last_message_at')]),
      })),
    ),
);

function toChat(row: Selectable<ChatsTable>): Chat {
  return camelCased(row);
}
