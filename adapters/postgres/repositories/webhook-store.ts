import { sql, type Kysely, type Selectable } from 'kysely';
import type { ConnectionEventName, Webhook } from '../../../core/webhooks/webhook.ts';
import type { WebhookStore } from '../../../core/webhooks/webhooks.ts';
import type { Batch, BatchStore, Delivery, DeliveryAttempt, DeliveryStore, EventLog, LoggedEvent, PendingFanouts } from '../../../core/webhooks/dispatch.ts';
import type { DeliveryState } from '../../../core/webhooks/delivery.ts';
import { page, pageOffset } from '../../../core/shared/pagination.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { Database, EventsTable, WebhookDeliveriesTable, WebhooksTable } from '../schema.ts';
import { isUuid } from '../../../core/shared/ids.ts';

export function webhookStore(db: Kysely<Database>, box: SecretBox): WebhookStore {
  const toWebhook = (row: Selectable<WebhooksTable>): Webhook => ({
    id: row.id,
    workspaceId: row.workspace_id,
    url: row.url,
    events: row.events as ConnectionEventName[],
    connections: row.connections,
    hmacEnabled: row.hmac_enabled,
    secret: box.open(row.secret),
    messageGroupDelay: row.message_group_delay,
    enableSimulateTyping: row.enable_simulate_typing,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
  const columns = (w: Webhook) => ({
    url: w.url,
    events: w.events,
    connections: w.connections,
    hmac_enabled: w.hmacEnabled,
    secret: box.seal(w.secret),
    message_group_delay: w.messageGroupDelay,
    enable_simulate_typing: w.enableSimulateTyping,
    updated_at: w.updatedAt,
  });
  return {
    async insert(w) {
      await db.insertInto('webhooks').values({ id: w.id, workspace_id: w.workspaceId, created_at: w.createdAt, ...columns(w) }).execute();
    },
    async get(workspaceId, id) {
      if (!isUuid(id)) return undefined;
      const row = await db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return row && toWebhook(row);
    },
    async find(id) {
      const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toWebhook(row);
    },
    async findMany(ids) {
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('webhooks').selectAll().where('id', 'in', [...ids]).execute();
      return rows.map(toWebhook);
    },
    async list(workspaceId, request) {
      let query = db.selectFrom('webhooks').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('url', 'ilike', `%${request.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      const { total } = await query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('created_at').orderBy('id').limit(request.perPage).offset(pageOffset(request)).execute();
      return page(rows.map(toWebhook), Number(total), request);
    },
    async update(w) {
      await db.updateTable('webhooks').set(columns(w)).where('id', '=', w.id).execute();
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
      const rows = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('workspace_id', 'in', workspaceIds)
        .where('connections', '&&', sql<string[]>`${[...connectionIds]}::uuid[]`)
        .execute();
      return rows.map(toWebhook);
    },
  };
}

export function deliveryStore(db: Kysely<Database>): DeliveryStore {
  return {
    async insert(d) {
      const result = await db
        .insertInto('webhook_deliveries')
        .values(deliveryRow(d))
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
    },
    async insertMany(deliveries) {
      if (deliveries.length === 0) return;
      await db
        .insertInto('webhook_deliveries')
        .values(deliveries.map(deliveryRow))
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    async get(id) {
      if (!isUuid(id)) return undefined;
      const row = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toDelivery(row);
    },
    async lock(id) {
      if (!isUuid(id)) return undefined;
      const row = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      return row && toDelivery(row);
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
          .map((a): DeliveryAttempt => ({ deliveryId: a.delivery_id, attempt: a.attempt, at: a.at, statusCode: a.status_code, error: a.error, durationMs: a.duration_ms })),
      }));
      return page(data, Number(total), request);
    },
  };
}

export function batchStore(db: Kysely<Database>): BatchStore {
  return {
    async lock(webhookId, connectionId, remoteJid) {
      const row = await db
        .selectFrom('webhook_batches')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .where('connection_id', '=', connectionId)
        .where('remote_jid', '=', remoteJid)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return undefined;
      const events = (typeof row.events === 'string' ? JSON.parse(row.events) : row.events) as LoggedEvent[];
      return { webhookId, connectionId, remoteJid, window: { closesAt: row.closes_at, version: row.version }, events } satisfies Batch;
    },
    async save(b) {
      const values = { closes_at: b.window.closesAt, version: b.window.version, events: b.events };
      await db
        .insertInto('webhook_batches')
        .values({ webhook_id: b.webhookId, connection_id: b.connectionId, remote_jid: b.remoteJid, ...values })
        .onConflict((oc) => oc.columns(['webhook_id', 'connection_id', 'remote_jid']).doUpdateSet(values))
        .execute();
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
      // Rows another worker is taking are skipped; a rolled-back take puts them back.
      const taken = await db
        .deleteFrom('webhook_fanout')
        .where('event_id', 'in', (eb) => eb.selectFrom('webhook_fanout').select('event_id').orderBy('event_id').limit(limit).forUpdate().skipLocked())
        .returning('event_id')
        .execute();
      if (taken.length === 0) return [];
      const rows = await db.selectFrom('events').selectAll().where('id', 'in', taken.map((t) => t.event_id)).orderBy('created_at').orderBy('id').execute();
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
  const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as LoggedEvent['payload'];
  return { id: row.id, workspaceId: row.workspace_id, connectionId: row.connection_id, event: row.event, remoteJid: row.remote_jid, payload };
}

function deliveryRow(d: Delivery) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    target: d.target,
    workspace_id: d.workspaceId,
    event: d.event,
    event_ids: d.eventIds,
    body: d.body,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export function toDelivery(row: Selectable<WebhookDeliveriesTable>): Delivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    target: row.target,
    workspaceId: row.workspace_id,
    event: row.event,
    eventIds: row.event_ids,
    body: row.body,
    state: row.state as DeliveryState,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
