import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import { compiledOnce } from '../compiled-once.ts';
import type { Chat, ChatMessage, ChatStore, MessageStore, NetworkId } from '../../../core/messaging/message.ts';
import type { DeliveryStatus } from '../../../core/messaging/delivery-status.ts';
import { page, pageOffset } from '../../../core/shared/pagination.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import type { ChatsTable, Database, MessagesTable } from '../schema.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import { containing } from '../like-pattern.ts';

export function messageStore(db: Kysely<Database>): MessageStore {
  async function getMany(ids: readonly string[]) {
    const ours = ids.filter(isUuid);
    if (ours.length === 0) return [];
    return (await db.selectFrom('messages').selectAll().where('id', 'in', ours).execute()).map(toMessage);
  }

  async function lockMany(ids: readonly string[]) {
    const ours = ids.filter(isUuid);
    if (ours.length === 0) return [];
    return (await db.selectFrom('messages').selectAll().where('id', 'in', ours).orderBy('id').forUpdate().execute()).map(toMessage);
  }

  /** Transaction-scoped advisory locks, one per network id, always taken in the same order. */
  async function lockNetworkIds(ids: readonly NetworkId[]) {
    const keys = [...new Set(ids.map((id) => `message:${id.connectionId}:${id.externalId}`))].sort();
    if (keys.length === 0) return;
    // Volatile functions in a select list run after its ORDER BY (Postgres ≥ 9.6): locks in key order.
    await sql`select pg_advisory_xact_lock(hashtext(k)) from (values ${sql.join(keys.map((k) => sql`(${k})`))}) as v(k) order by k`.execute(db);
  }

  return {
    async insert(m) {
      const row = messageRow(m);
      const result = await insertMessage(db, ...MESSAGE_COLUMNS.map((column) => row[column]));
      return Number(result.numAffectedRows ?? 0n) > 0;
    },
    async insertReceived(messages) {
      if (messages.length === 0) return [];
      // In network id order: two batches holding the same ids wait for each other, never deadlock.
      const rows = messages.map(messageRow).sort((a, b) => (a.external_id! < b.external_id! ? -1 : a.external_id! > b.external_id! ? 1 : 0));
      const inserted = await db
        .insertInto('messages')
        .values(rows)
        .onConflict((oc) => oc.columns(['connection_id', 'external_id']).where('external_id', 'is not', null).doNothing())
        .returning('external_id')
        .execute();
      return inserted.map((row) => row.external_id!);
    },
    async insertMany(messages) {
      if (messages.length === 0) return;
      await db.insertInto('messages').values(messages.map(messageRow)).execute();
    },
    async get(id) {
      return (await getMany([id]))[0];
    },
    getMany,
    async lock(id) {
      return (await lockMany([id]))[0];
    },
    lockMany,
    async findByExternalId(connectionId, externalId) {
      const row = await db.selectFrom('messages').selectAll().where('connection_id', '=', connectionId).where('external_id', '=', externalId).executeTakeFirst();
      return row && toMessage(row);
    },
    async findByIdempotencyKey(connectionId, key) {
      const row = await db.selectFrom('messages').selectAll().where('connection_id', '=', connectionId).where('idempotency_key', '=', key).executeTakeFirst();
      return row && toMessage(row);
    },
    async update(m) {
      await db
        .updateTable('messages')
        .set({ external_id: m.externalId, status: m.status, error: m.error ?? null, content: m.content, updated_at: m.updatedAt, ...leavesQueueUnlessPending(m.status) })
        .where('id', '=', m.id)
        .execute();
    },
    async recordSent(messages) {
      // Sent together, they mostly end alike (SENT, no error): one write per kind of end, each
      // message's own network id joined from two arrays (a CASE of one branch per message costs
      // Kysely time in the square of the batch).
      const alike = new Map<string, ChatMessage[]>();
      for (const m of messages) {
        const key = JSON.stringify([m.status, m.error, m.updatedAt.getTime()]);
        alike.set(key, [...(alike.get(key) ?? []), m]);
      }
      for (const group of alike.values()) {
        const { status, error, updatedAt } = group[0]!;
        const ids = group.map((m) => m.id);
        const networkIds = group.map((m) => m.externalId);
        await db
          .updateTable('messages')
          .from(sql<{ id: string; external_id: string | null }>`(select unnest(${ids}::uuid[]) as id, unnest(${networkIds}::text[]) as external_id)`.as('sent'))
          .set((eb) => ({
            status,
            error: error ?? null,
            updated_at: updatedAt,
            external_id: eb.ref('sent.external_id'),
            ...leavesQueueUnlessPending(status),
          }))
          .whereRef('messages.id', '=', 'sent.id')
          .execute();
      }
    },
    async lockNetworkId(connectionId, externalId) {
      await lockNetworkIds([{ connectionId, externalId }]);
    },
    lockNetworkIds,
    async holdReceipt(connectionId, externalId, receipt) {
      // A receipt held a day without its message never finds one (not ours, or lost): forget it.
      await db.deleteFrom('held_receipts').where('received_at', '<', new Date(Date.now() - 86_400_000)).execute();
      await db
        .insertInto('held_receipts')
        .values({ connection_id: connectionId, external_id: externalId, status: receipt.status, error: receipt.error ?? null })
        .execute();
    },
    async takeHeldReceipts(ids) {
      if (ids.length === 0) return [];
      const rows = await db
        .deleteFrom('held_receipts')
        .where((eb) => eb(eb.refTuple('connection_id', 'external_id'), 'in', ids.map((id) => eb.tuple(id.connectionId, id.externalId))))
        .returning(['connection_id', 'external_id', 'status', 'error'])
        .execute();
      return rows.map((row) => ({
        ...camelCased(row),
        status: row.status as DeliveryStatus,
        error: parseJson(row.error) as { code: number | string; title: string } | null,
      }));
    },
    async history(connectionId, remoteJid, { limit, before }) {
      let query = db.selectFrom('messages').selectAll().where('connection_id', '=', connectionId).where('remote_jid', '=', remoteJid);
      if (before) {
        query = query.where((eb) =>
          eb.or([
            eb('message_timestamp', '<', before.messageTimestamp),
            eb.and([eb('message_timestamp', '=', before.messageTimestamp), eb('id', '<', before.id)]),
          ]),
        );
      }
      const rows = await query.orderBy('message_timestamp', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toMessage);
    },
  };
}

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
      await db
        .insertInto('chats')
        .values(
          sorted.map((t) => ({ connection_id: connectionId, remote_jid: t.remoteJid, name: t.name ?? null, last_message_at: t.at, last_contact_message_at: t.contactAt ?? null })),
        )
        .onConflict((oc) =>
          oc.columns(['connection_id', 'remote_jid']).doUpdateSet((eb) => ({
            name: eb.fn.coalesce(eb.ref('excluded.name'), eb.ref('chats.name')),
            last_message_at: eb.fn('greatest', [eb.ref('chats.last_message_at'), eb.ref('excluded.last_message_at')]),
            // greatest() skips nulls: a chat with no contact message here keeps its send window,
            // and late-arriving old messages never move it back (spec 3.4).
            last_contact_message_at: eb.fn('greatest', [eb.ref('chats.last_contact_message_at'), eb.ref('excluded.last_contact_message_at')]),
          })),
        )
        .execute();
    },
    async touchOutgoing(connectionId, remoteJids, at) {
      if (remoteJids.length === 0) return;
      await db
        .insertInto('chats')
        .values(remoteJids.map((jid) => ({ connection_id: connectionId, remote_jid: jid, name: null, last_message_at: at, last_contact_message_at: null })))
        .onConflict((oc) =>
          oc.columns(['connection_id', 'remote_jid']).doUpdateSet((eb) => ({
            last_message_at: eb.fn('greatest', [eb.ref('chats.last_message_at'), eb.ref('excluded.last_message_at')]),
          })),
        )
        .execute();
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

const MESSAGE_COLUMNS = [
  'id',
  'workspace_id',
  'connection_id',
  'direction',
  'remote_jid',
  'external_id',
  'kind',
  'content',
  'status',
  'error',
  'idempotency_key',
  'reservation_id',
  'reply_to',
  'sent_by',
  'message_timestamp',
  'created_at',
  'updated_at',
  'send_state',
  'send_due_at',
] as const satisfies ReadonlyArray<keyof MessagesTable>;

/** An outbound message stored PENDING is a send waiting for the network: it enters the send queue as it is stored. */
function messageRow(m: ChatMessage): Insertable<MessagesTable> {
  const queued = m.direction === 'outbound' && m.status === 'PENDING';
  return { ...snakeCased(m), error: m.error ?? null, send_state: queued ? 'queued' : null, send_due_at: queued ? m.createdAt : null };
}

/** Every send and every received message inserts one: compiled once. A replayed network id is skipped. */
const insertMessage = compiledOnce((db: Kysely<Database>, ...values: unknown[]) =>
  db
    .insertInto('messages')
    .values(Object.fromEntries(MESSAGE_COLUMNS.map((column, i) => [column, values[i]])) as Insertable<MessagesTable>)
    .onConflict((oc) => oc.columns(['connection_id', 'external_id']).where('external_id', 'is not', null).doNothing()),
);

/** A message as the domain sees it: its send's queue columns stay in the send queue (send-queue.ts). */
export function toMessage(row: Selectable<MessagesTable>): ChatMessage {
  const { send_state, send_due_at, send_owner, send_attempts, send_hops, ...message } = row;
  return {
    ...camelCased(message),
    content: parseJson(row.content),
    status: row.status as ChatMessage['status'],
    error: parseJson(row.error) as ChatMessage['error'],
  };
}

function toChat(row: Selectable<ChatsTable>): Chat {
  return camelCased(row);
}

/** A message whose status leaves PENDING (sent, settled, failed) leaves the send queue in the same write. */
function leavesQueueUnlessPending(status: string) {
  return status === 'PENDING' ? {} : { send_state: null, send_due_at: null, send_owner: null };
}

/** jsonb comes back parsed from pg and PGlite alike; tolerate a string just in case. */
function parseJson(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
