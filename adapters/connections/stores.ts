import { sql, type Kysely } from 'kysely';
import type { SendDeps } from '../../core/messaging/send.ts';
import type { UnitOfWork } from '../../core/shared/unit-of-work.ts';
import { onePerContext, type AppContext } from '../http/context.ts';
import type { StoresImportedSessions } from '../drivers/index.ts';
import type { Database } from '../postgres/schema.ts';
import { baseStores } from '../postgres/stores.ts';
import { connectionStore } from '../postgres/repositories/connection-store.ts';
import { chatStore } from '../postgres/repositories/chat-store.ts';
import { messageStore } from '../postgres/repositories/message-store.ts';
import { mediaStore } from '../postgres/repositories/media-store.ts';
import { sendQueue } from '../postgres/repositories/send-queue.ts';
import { templateStore } from '../postgres/repositories/template-store.ts';
import { eventPublisher } from '../postgres/repositories/event-store.ts';
import { batchStore, deliveryStore, eventLog, pendingFanouts, webhookStore } from '../postgres/repositories/webhook-store.ts';

/** Every store of connections and messaging bound to one connection or transaction, with its outbox. */
export function messagingStores(db: Kysely<Database>, ctx: AppContext) {
  const outbox = ctx.queue.outbox(db);
  return {
    ...baseStores(db),
    connections: connectionStore(db, ctx.box),
    messages: messageStore(db),
    sendQueue: sendQueue(db),
    chats: chatStore(db),
    media: mediaStore(db),
    events: eventPublisher(db, ctx),
    webhooks: webhookStore(db, ctx.box),
    deliveries: deliveryStore(db),
    batches: batchStore(db),
    templates: templateStore(db),
    // The definition a degraded template send is rendered from: the workspace's template of that
    // name and language on any connection, an APPROVED one first.
    async templateDefinition(workspaceId: string, name: string, language: string) {
      const row = await db
        .selectFrom('templates')
        .select('components')
        .where('workspace_id', '=', workspaceId)
        .where('name', '=', name)
        .where('language', '=', language)
        .orderBy(sql`status = 'APPROVED' desc`)
        .orderBy('updated_at', 'desc')
        .executeTakeFirst();
      if (!row) return undefined;
      return { components: (typeof row.components === 'string' ? JSON.parse(row.components) : row.components) as unknown[] };
    },
    // Sync tokens are single-use like upload tickets: their ids share the record of used ones.
    syncTokens: { use: (jti: string, expiresAt: Date) => mediaStore(db).useTicket(`sync-session:${jti}`, expiresAt) },
    // Imported session material goes to the driver's own pairing store, in this transaction.
    pairings: {
      async replace(connection: { id: string; driver: string }, material: unknown) {
        const driver = ctx.drivers.get(connection.driver) as Partial<StoresImportedSessions> | undefined;
        await driver?.storeImportedSession?.(db, connection.id, material);
      },
    },
    eventLog: eventLog(db),
    fanouts: pendingFanouts(db),
    outbox,
  };
}

export type MessagingStores = ReturnType<typeof messagingStores>;

/**
 * The stores bound to the context's pool, made once: a read outside any transaction (most GETs,
 * the sandbox's checks, the jobs) would otherwise build every store, a few hundred closures, per
 * call, and that garbage is collected in pauses every request in flight waits out.
 */
export const poolMessagingStores: (ctx: AppContext) => MessagingStores = onePerContext((ctx) => messagingStores(ctx.db, ctx));

export function messagingUnitOfWork(ctx: AppContext): UnitOfWork<MessagingStores> {
  return {
    transaction: (work) => ctx.db.transaction().execute((trx) => work(messagingStores(trx, ctx))),
    read: (work) => work(poolMessagingStores(ctx)),
  };
}

/** What every send needs from the app context (core's `SendDeps`), whichever surface sends. */
export function sendDeps(ctx: Pick<AppContext, 'clock' | 'ids' | 'plans' | 'drivers' | 'templateComponents'>): SendDeps {
  return { clock: ctx.clock, ids: ctx.ids, plans: ctx.plans, drivers: ctx.drivers, templateComponents: ctx.templateComponents };
}

/** The dependencies of the messaging use cases, from the app context. */
export function messagingDeps(ctx: AppContext) {
  return {
    ...sendDeps(ctx),
    signingKey: ctx.keys.signing,
    // Read when used: the server learns its URL only once it has bound its port.
    get publicUrl() {
      return ctx.config.publicUrl;
    },
  };
}
