/**
 * What a plugin's stores are written with: the database's table types (the base's, to which a
 * plugin adds its own), its migrations' type, unique-violation detection, the row mapper, the
 * paged listing, the lookups of one row (by its key, by id, by id in a workspace; read or
 * locked), the insert-if-absent and the settings-row upsert, the search pattern, queries compiled
 * once (hot paths), and the base stores a plugin may compose
 * into its own (connections, messages, media, webhooks, the event publisher).
 */
import { messagingStores as hostMessagingStores, messagingDeps as hostMessagingDeps, sendDeps as hostSendDeps } from '../../adapters/connections/stores.ts';
import { templateStores as hostTemplateStores, templateDeps as hostTemplateDeps } from '../../adapters/connections/template-stores.ts';
import { onPluginContext, storeOnPluginContext } from './host.ts';

export type { Database } from '../../adapters/postgres/schema.ts';
export type { DatabaseHandle, StoreFactory, PluginContext } from './context.ts';
export type { Migration } from '../../adapters/postgres/migrator.ts';
export { isUniqueViolation, uniqueViolationAs } from '../../adapters/postgres/errors.ts';
export { camelCased, snakeCased, type CamelCased, type SnakeCased } from '../../adapters/postgres/row-case.ts';
export { pageOfRows, pageOfLoadedRows } from '../../adapters/postgres/paged-rows.ts';
export { findInWorkspace, lockInWorkspace } from '../../adapters/postgres/workspace-row.ts';
export { findRow, lockRow, findById, lockById, type RowKey, type ToEntity } from '../../adapters/postgres/keyed-row.ts';
export { insertedIfAbsent, updatedAny, putRow } from '../../adapters/postgres/row-writes.ts';
export { containing } from '../../adapters/postgres/like-pattern.ts';
export { compiledOnce } from '../../adapters/postgres/compiled-once.ts';
export { anyOf } from '../../adapters/postgres/any-of.ts';
export { baseStores } from '../../adapters/postgres/stores.ts';
export { mediaStore } from '../../adapters/postgres/repositories/media-store.ts';
export { eventPublisher } from '../../adapters/postgres/repositories/event-store.ts';

/** The base's messaging stores (connections, messages, contacts, outbox…) on a handle. */
export const messagingStores = storeOnPluginContext(hostMessagingStores);
/** The messaging use cases' dependencies (clock, ids, drivers, plans, signing key…). */
export const messagingDeps = onPluginContext(hostMessagingDeps);
/** What every send needs (core's `SendDeps`: clock, ids, plans, drivers, template components). */
export const sendDeps = hostSendDeps;
export const templateStores = storeOnPluginContext(hostTemplateStores);
export const templateDeps = onPluginContext(hostTemplateDeps);
