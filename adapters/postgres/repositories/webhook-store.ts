import { sql, type Kysely, type Selectable } from 'kysely';
import type { ConnectionEventName, Webhook } from '../../../core/webhooks/webhook.ts';
import type { WebhookStore } from '../../../core/webhooks/webhooks.ts';
import type { Batch, BatchStore, Delivery, DeliveryAttempt, DeliveryStore, EventLog, LoggedEvent, PendingFanouts } from '../../../core/webhooks/dispatch.ts';
import type { DeliveryState } from '../../../core/webhooks/delivery.ts';
import { page, pageOffset } from '../../../core/shared/pagination.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import type { Database, EventsTable, WebhookDeliveriesTable, WebhooksTable } from '../schema.ts';
import { containing } from '../like-pattern.ts';
import { pageOfRows } from '../paged-rows.ts';
import { findById, findRow, lockById, lockRow } from '../keyed-row.ts';
import { findInWorkspace } from '../workspace-row.ts';
import { insertedIfAbsent, putRow } from '../row-writes.ts';
import { compiledOnce } from '../compiled-once.ts';
import { amongPicked, anyOf, pickedKeys } from '../any-of.ts';

export function webhookStore(db: Kysely<Database>, box: SecretBox): WebhookStore {
  // The secret is stored sealed (adapters/crypto/secret-box.ts).
  const toWebhook = (row: Selectable<WebhooksTable>): Webhook => ({ ...camelCased(row), events: row.events as ConnectionEventName[], secret: box.open(row.secret) });
  const toRow = (w: Webhook) => ({ ...snakeCased(w), secret: box.seal(w.secret) });
  return {
    async insert(w) {
      await db.insertInto('webhooks').values(toRow(w)).execute();
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'webhooks', workspaceId, id, toWebhook);
    },
    async find(id) {
      return findRow(db, 'webhooks', { id }, toWebhook);
    },
    async findMany(ids) {
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('webhooks').selectAll().where('id', 'in', [...ids]).execute();
      return rows.map(toWebhook);
    },
    async list(workspaceId, request) {
      let query = db.selectFrom('webhooks').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('url', 'ilike', containing(request.search));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at').orderBy('id'), toWebhook);
    },
    async update(w) {
      const { id, workspace_id: _workspaceId, created_at: _createdAt, ...changes } = toRow(w);
      await db.updateTable('webhooks').set(changes).where('id', '=', id).execute();
    },
    async delete(id) {
      // Deliveries name their webhook without a foreign key (one engine for every webhook kind).
      await db.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).where('target', '=', 'connection').execute();
      await db.deleteFrom('webhooks').where('id', '=', id).execute();
    },
    async unbindConnection(workspaceId, connectionId) {
      await db
        .updateTable('webhooks')
        .set((eb) => ({ connections: eb.fn<string[]>('array_remove', ['connections', eb.val(connectionId)]) }))
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb(eb.val(connectionId), '=', eb.fn.any('connections')))
        .execute();
    },
    async subscribedTo(workspaceId, connectionId, event) {
      const rows = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb(eb.val(connectionId), '=', eb.fn.any('connections')))
        .where((eb) => eb(eb.val(event), '=', eb.fn.any('events')))
        .execute();
      return rows.map(toWebhook);
    },
    async boundTo(workspaceIds, connectionIds) {
      if (workspaceIds.length === 0 || connectionIds.length === 0) return [];
      const { rows } = await webhooksBoundTo(db, workspaceIds, connectionIds);
      return rows.map(toWebhook);
    },
  };
}

export function deliveryStore(db: Kysely<Database>): DeliveryStore {
  return {
    async insert(d) {
      return insertedIfAbsent(db.insertInto('webhook_deliveries').values(snakeCased(d)).onConflict((oc) => oc.column('id').doNothing()));
    },
    async insertMany(deliveries, claim) {
      if (deliveries.length === 0) return new Set();
      const claimed = (d: Delivery) => (claim?.ids.has(d.id) ? claim : undefined);
      const inserted = await insertDeliveries(
        db,
        deliveries.map((d) => d.id),
        deliveries.map((d) => d.webhookId),
        deliveries.map((d) => d.target),
        deliveries.map((d) => d.workspaceId),
        deliveries.map((d) => d.event),
        deliveries.map((d) => `{${d.eventIds.join(',')}}`),
        deliveries.map((d) => d.body),
        deliveries.map((d) => d.state),
        deliveries.map((d) => d.attempts),
        deliveries.map((d) => d.nextAttemptAt?.toISOString() ?? null),
        deliveries.map((d) => claimed(d)?.claimId ?? null),
        deliveries.map((d) => claimed(d)?.claimedUntil.toISOString() ?? null),
        deliveries.map((d) => d.createdAt.toISOString()),
        deliveries.map((d) => d.updatedAt.toISOString()),
      );
      return new Set(inserted.rows.map((row) => row.id));
    },
    async get(id) {
      return findById(db, 'webhook_deliveries', id, toDelivery);
    },
    async lock(id) {
      return lockById(db, 'webhook_deliveries', id, toDelivery);
    },
    async update(d) {
      await db
        .updateTable('webhook_deliveries')
        .set({ state: d.state, attempts: d.attempts, next_attempt_at: d.nextAttemptAt, updated_at: d.updatedAt })
        .where('id', '=', d.id)
        .execute();
    },
    async list(webhookId, request) {
      const query = db.selectFrom('webhook_deliveries').where('webhook_id', '=', webhookId);
      const { total } = await query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(request.perPage).offset(pageOffset(request)).execute();
      const attempts = rows.length
        ? await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', rows.map((r) => r.id)).orderBy('attempt').execute()
        : [];
      const data = rows.map((row) => ({
        ...toDelivery(row),
        attemptLog: attempts
          .filter((a) => a.delivery_id === row.id)
          .map((a): DeliveryAttempt => camelCased(a)),
      }));
      return page(data, Number(total), request);
    },
  };
}

export function batchStore(db: Kysely<Database>): BatchStore {
  return {
    async lock(webhookId, connectionId, remoteJid) {
      return lockRow(db, 'webhook_batches', { webhook_id: webhookId, connection_id: connectionId, remote_jid: remoteJid }, (row): Batch => {
        const events = (typeof row.events === 'string' ? JSON.parse(row.events) : row.events) as LoggedEvent[];
        return { webhookId, connectionId, remoteJid, window: { closesAt: row.closes_at, version: row.version }, events };
      });
    },
    async save(b) {
      await putRow(db, 'webhook_batches', ['webhook_id', 'connection_id', 'remote_jid'], {
        webhook_id: b.webhookId,
        connection_id: b.connectionId,
        remote_jid: b.remoteJid,
        closes_at: b.window.closesAt,
        version: b.window.version,
        events: b.events,
      });
    },
    async delete(webhookId, connectionId, remoteJid) {
      await db.deleteFrom('webhook_batches').where('webhook_id', '=', webhookId).where('connection_id', '=', connectionId).where('remote_jid', '=', remoteJid).execute();
    },
  };
}

/** Events waiting for their fan-out (written with the event, event-store.ts), taken in batches. */
export function pendingFanouts(db: Kysely<Database>): PendingFanouts {
  return {
    async take(limit) {
      const { rows } = await takeFanouts(db, limit);
      return rows.map(toLoggedEvent);
    },
  };
}

export function eventLog(db: Kysely<Database>): EventLog {
  return {
    async get(id) {
      const row = await db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toLoggedEvent(row);
    },
  };
}

function toLoggedEvent(row: Selectable<EventsTable>): LoggedEvent {
  const { created_at: _createdAt, ...event } = row;
  const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as LoggedEvent['payload'];
  return { ...camelCased(event), payload };
}

/** The claim columns are the delivery engine's bookkeeping (delivery-claims.ts), not the delivery's. */
export function toDelivery(row: Selectable<WebhookDeliveriesTable>): Delivery {
  const { claim_id: _claimId, claimed_until: _claimedUntil, attempts_made: _attemptsMade, ...delivery } = row;
  return { ...camelCased(delivery), state: row.state as DeliveryState };
}

// The delivery engine runs these for every batch of events: each has one text whatever the
// batch, compiled once (ids go as one array, rows as one JSON array).

const webhooksBoundTo = compiledOnce((db: Kysely<Database>, workspaceIds: readonly string[], connectionIds: readonly string[]) =>
  db
    .selectFrom('webhooks')
    .selectAll()
    .where('workspace_id', '=', anyOf(workspaceIds, 'uuid'))
    .where('connections', '&&', sql<string[]>`${connectionIds}::uuid[]`),
);

/**
 * The events of the rows taken, oldest first, in one statement with the take. Rows another worker
 * is taking are skipped; a rolled-back take puts them back. The events are read by their keys as
 * one array (`= any(array(…))`), never joined to the taken rows: a join may be planned as a scan
 * of the whole event log.
 */
const takeFanouts = compiledOnce((db: Kysely<Database>, limit: number) =>
  db
    .with('picked', pickedKeys(db.selectFrom('webhook_fanout').select('event_id').orderBy('event_id').limit(limit).forUpdate().skipLocked()))
    .with('taken', (w) => w.deleteFrom('webhook_fanout').using('picked').where(amongPicked('webhook_fanout.event_id')).returning('webhook_fanout.event_id'))
    .selectFrom('events')
    .selectAll('events')
    .where((eb) => eb('events.id', '=', sql<string>`any(array(${eb.selectFrom('taken').select('taken.event_id')}))`))
    .orderBy('events.created_at')
    .orderBy('events.id'),
);

const DELIVERY_COLUMNS = ['id', 'webhook_id', 'target', 'workspace_id', 'event', 'event_ids', 'body', 'state', 'attempts', 'next_attempt_at', 'claim_id', 'claimed_until', 'created_at', 'updated_at'] as const;

/**
 * Deliveries given as an array parameter per column (each delivery's event ids as the text of a
 * uuid array): unnested arrays cost Postgres less than one JSON document of rows taken apart
 * with jsonb_to_recordset, whose every body would be a JSON string to unescape. One already
 * there (the same webhook and events) is kept. A row may come claimed (the fan-out's worker
 * holds it from birth). Returns the ids inserted.
 */
const insertDeliveries = compiledOnce(
  (
    db: Kysely<Database>,
    ids: string[],
    webhookIds: string[],
    targets: string[],
    workspaceIds: string[],
    events: string[],
    eventIds: string[],
    bodies: string[],
    states: string[],
    attempts: number[],
    nextAttemptAts: Array<string | null>,
    claimIds: Array<string | null>,
    claimedUntils: Array<string | null>,
    createdAts: string[],
    updatedAts: string[],
  ) =>
    db
      .insertInto('webhook_deliveries')
      .columns([...DELIVERY_COLUMNS])
      .expression((eb) =>
        eb
          .selectFrom(
            sql<Record<(typeof DELIVERY_COLUMNS)[number], unknown>>`unnest(${ids}::uuid[], ${webhookIds}::uuid[], ${targets}::text[], ${workspaceIds}::uuid[], ${events}::text[], ${eventIds}::text[], ${bodies}::text[], ${states}::text[], ${attempts}::int[], ${nextAttemptAts}::timestamptz[], ${claimIds}::uuid[], ${claimedUntils}::timestamptz[], ${createdAts}::timestamptz[], ${updatedAts}::timestamptz[])`.as<'r'>(
              sql`r(${sql.join(DELIVERY_COLUMNS.map((c) => sql.ref(c)))})`,
            ),
          )
          .select((eb) => DELIVERY_COLUMNS.map((c) => (c === 'event_ids' ? sql<string[]>`r.event_ids::uuid[]`.as('event_ids') : eb.ref(`r.${c}`).as(c)))),
      )
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id'),
);
