import type { Kysely } from 'kysely';
import type { TemplateStatusUpdate } from '../../core/templates/platform.ts';
import { applyTemplateCallback, type TemplateDeps, type TemplateStores } from '../../core/templates/templates.ts';
import type { AppContext } from '../http/context.ts';
import { connectionStore } from '../postgres/repositories/connection-store.ts';
import { templateStore } from '../postgres/repositories/template-store.ts';
import type { Database } from '../postgres/schema.ts';

/** The ports of core/templates bound to one connection or transaction, and its dependencies. */
export function templateStores(db: Kysely<Database>, ctx: AppContext): TemplateStores {
  return { connections: connectionStore(db, ctx.box), templates: templateStore(db) };
}

export function templateDeps(ctx: AppContext): TemplateDeps {
  return { clock: ctx.clock, ids: ctx.ids, drivers: ctx.drivers, rules: ctx.templateComponents };
}

/** For the provider callback (`DriverEvents.templateStatus`): one transaction per update. */
export function applyTemplateStatus(ctx: AppContext, connectionId: string, update: TemplateStatusUpdate) {
  return ctx.db.transaction().execute((trx) => applyTemplateCallback(templateStores(trx, ctx), templateDeps(ctx), connectionId, update));
}

