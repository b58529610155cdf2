import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import { anyOf } from '../any-of.ts';
import { compiledOnce } from '../compiled-once.ts';
import type { ChatMessage, MessageStore, NetworkId } from '../../../core/messaging/message.ts';
import type { DeliveryStatus } from '../../../core/messaging/delivery-status.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import type { Database, MessagesTable } from '../schema.ts';
import { isUuid } from '../../../core/shared/ids.ts';

export function messageStore(db: Kysely<Database>): MessageStore {
  async function getMany(ids: readonly string[]) {
    const ours = ids.filter(isUuid);
    if (ours.length === 0) return [];
    return (await messagesOf(db, ours)).rows.map(toMessage);
  }

  async function lockMany(ids: readonly string[]) {
    const ours = ids.filter(isUuid);
    if (ours.length === 0) return [];
    return (await lockMessages(db, ours)).rows.map(toMessage);
  }

  /** Transaction-scoped advisory locks, one per network id, always taken in the same order. */
  async function lockNetworkIds(ids: readonly NetworkId[]) {
    const keys = [...new Set(ids.map((id) => `message:${id.connectionId}:${id.externalId}`))].sort();
    if (keys.length === 0) return;
    await lockKeys(db, keys);
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
      const inserted = await insertReceived(db, ...columnArrays(rows));
      return inserted.rows.map((row) => row.external_id!);
    },
    async insertMany(messages) {
      if (messages.length === 0) return;
      await insertMessages(db, ...columnArrays(messages.map(messageRow)));
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
      if (messages.length === 0) return;
      // One write for the batch: each message's network id, status, error and time joined from arrays.
      await recordSent(
        db,
        messages.map((m) => m.id),
        messages.map((m) => m.externalId),
        messages.map((m) => m.status),
        messages.map((m) => jsonText(m.error)),
        messages.map((m) => m.updatedAt.toISOString()),
      );
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
      const { rows } = await takeHeldReceipts(
        db,
        ids.map((id) => id.connectionId),
        ids.map((id) => id.externalId),
      );
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

/**
 * The send path's statements, each of one shape whatever the batch (a batch is one array
 * parameter per column, unnested in the order given), compiled once: Postgres plans one
 * statement text, where a list of n values was a new text for every n.
 */

/** The message columns' types, for their arrays. */
const MESSAGE_COLUMN_TYPES = {
  id: 'uuid',
  workspace_id: 'uuid',
  connection_id: 'uuid',
  direction: 'text',
  remote_jid: 'text',
  external_id: 'text',
  kind: 'text',
  content: 'jsonb',
  status: 'text',
  error: 'jsonb',
  idempotency_key: 'text',
  reservation_id: 'uuid',
  reply_to: 'text',
  sent_by: 'uuid',
  message_timestamp: 'timestamptz',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
  send_state: 'text',
  send_due_at: 'timestamptz',
} as const satisfies Record<(typeof MESSAGE_COLUMNS)[number], string>;

/** Message rows as one array per column (`MESSAGE_COLUMNS`): json as its text, times as ISO text. */
function columnArrays(rows: readonly Insertable<MessagesTable>[]): unknown[][] {
  return MESSAGE_COLUMNS.map((column) => {
    const type = MESSAGE_COLUMN_TYPES[column];
    return rows.map((row) => {
      const value = row[column];
      if (type === 'jsonb') return jsonText(value);
      if (value instanceof Date) return value.toISOString();
      return value ?? null;
    });
  });
}

/**
 * The rows of `columnArrays`, as the table `given`. A json column travels as `text[]` and each
 * element is cast in SQL: typed `jsonb[]`, Bun's client encoded each JSON text again, as a JSON
 * string, once it knew the statement's parameter types (the row then held a string, not an object).
 */
function givenMessages(arrays: readonly unknown[]) {
  const typed = MESSAGE_COLUMNS.map((column, i) => sql`${arrays[i]}::${sql.raw(arrayType(column))}[]`);
  const columns = MESSAGE_COLUMNS.map((column) => (MESSAGE_COLUMN_TYPES[column] === 'jsonb' ? sql`${sql.ref(column)}::jsonb` : sql.ref(column)));
  const unnested = sql`unnest(${sql.join(typed)}) as u(${sql.join(MESSAGE_COLUMNS.map((column) => sql.ref(column)))})`;
  return sql<Insertable<MessagesTable>>`(select ${sql.join(columns)} from ${unnested})`.as<'given'>(sql`given(${sql.join(MESSAGE_COLUMNS.map((column) => sql.ref(column)))})`);
}

/** The type of a column's array parameter: json as text (see `givenMessages`). */
function arrayType(column: (typeof MESSAGE_COLUMNS)[number]): string {
  const type = MESSAGE_COLUMN_TYPES[column];
  return type === 'jsonb' ? 'text' : type;
}

const insertMessages = compiledOnce((db: Kysely<Database>, ...arrays: unknown[][]) =>
  db
    .insertInto('messages')
    .columns([...MESSAGE_COLUMNS])
    .expression(db.selectFrom(givenMessages(arrays)).selectAll()),
);

const insertReceived = compiledOnce((db: Kysely<Database>, ...arrays: unknown[][]) =>
  db
    .insertInto('messages')
    .columns([...MESSAGE_COLUMNS])
    .expression(db.selectFrom(givenMessages(arrays)).selectAll())
    .onConflict((oc) => oc.columns(['connection_id', 'external_id']).where('external_id', 'is not', null).doNothing())
    .returning('external_id'),
);

const messagesOf = compiledOnce((db: Kysely<Database>, ids: string[]) =>
  db
    .selectFrom('messages')
    .selectAll()
    .where('id', '=', anyOf(ids, 'uuid')),
);

const lockMessages = compiledOnce((db: Kysely<Database>, ids: string[]) =>
  db
    .selectFrom('messages')
    .selectAll()
    .where('id', '=', anyOf(ids, 'uuid'))
    .orderBy('id')
    .forUpdate(),
);

/** Volatile functions in a select list run after its ORDER BY (Postgres ≥ 9.6): locks in key order. */
const lockKeys = compiledOnce((db: Kysely<Database>, keys: string[]) =>
  db
    .selectFrom(sql<{ k: string }>`unnest(${keys}::text[])`.as<'v'>(sql`v(k)`))
    .select(sql`pg_advisory_xact_lock(hashtext(v.k))`.as('locked'))
    .orderBy('v.k'),
);

/** A message whose status leaves PENDING (sent, settled, failed) leaves the send queue in the same write. */
const recordSent = compiledOnce(
  (db: Kysely<Database>, ids: string[], networkIds: Array<string | null>, statuses: string[], errors: Array<string | null>, updatedAts: string[]) =>
    db
      .updateTable('messages')
      .from(
        sql<{ id: string; external_id: string | null; status: string; error: unknown; updated_at: Date }>`(select id, external_id, status, error::jsonb as error, updated_at from unnest(${ids}::uuid[], ${networkIds}::text[], ${statuses}::text[], ${errors}::text[], ${updatedAts}::timestamptz[]) as u(id, external_id, status, error, updated_at))`.as<'sent'>(
          sql`sent(id, external_id, status, error, updated_at)`,
        ),
      )
      .set((eb) => {
        const unlessPending = <C extends 'send_state' | 'send_due_at' | 'send_owner'>(column: C) =>
          eb.case().when('sent.status', '=', 'PENDING').then(eb.ref(`messages.${column}`)).end();
        return {
          status: eb.ref('sent.status'),
          error: eb.ref('sent.error'),
          updated_at: eb.ref('sent.updated_at'),
          external_id: eb.ref('sent.external_id'),
          send_state: unlessPending('send_state'),
          send_due_at: unlessPending('send_due_at'),
          send_owner: unlessPending('send_owner'),
        };
      })
      .whereRef('messages.id', '=', 'sent.id'),
);

const takeHeldReceipts = compiledOnce((db: Kysely<Database>, connectionIds: string[], networkIds: string[]) =>
  db
    .deleteFrom('held_receipts')
    .where((eb) =>
      eb(
        eb.refTuple('connection_id', 'external_id'),
        'in',
        eb
          .selectFrom(sql<{ connection_id: string; external_id: string }>`unnest(${connectionIds}::uuid[], ${networkIds}::text[])`.as<'taken'>(sql`taken(connection_id, external_id)`))
          .select(['taken.connection_id', 'taken.external_id'])
          .$asTuple('connection_id', 'external_id'),
      ),
    )
    .returning(['connection_id', 'external_id', 'status', 'error']),
);

/** A json column's value as its text, for a `text[]` parameter cast to jsonb in SQL (null stays SQL null). */
function jsonText(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

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

/** A message whose status leaves PENDING (sent, settled, failed) leaves the send queue in the same write. */
function leavesQueueUnlessPending(status: string) {
  return status === 'PENDING' ? {} : { send_state: null, send_due_at: null, send_owner: null };
}

/** jsonb comes back parsed from pg and PGlite alike; tolerate a string just in case. */
function parseJson(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
