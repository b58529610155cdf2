import type { Kysely } from 'kysely';
import type { Actor } from '../../core/identity/identity.ts';
import type { TemplateStatusUpdate } from '../../core/templates/platform.ts';
import { applyTemplateCallback, checkTemplateSend, type TemplateDeps, type TemplateStores } from '../../core/templates/templates.ts';
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

/** For `send-template` (adapters/http/routes/messages.ts): the variables are checked before the call goes out. */
export function checkTemplateSendFor(ctx: AppContext, actor: Actor, connectionId: string, send: { name: unknown; language: unknown; components?: unknown }) {
  return checkTemplateSend(templateStores(ctx.db, ctx), templateDeps(ctx), actor, connectionId, send);
}

/** For the provider callback (`DriverEvents.templateStatus`): one transaction per update. */
export function applyTemplateStatus(ctx: AppContext, connectionId: string, update: TemplateStatusUpdate) {
  return ctx.db.transaction().execute((trx) => applyTemplateCallback(templateStores(trx, ctx), templateDeps(ctx), connectionId, update));
}

