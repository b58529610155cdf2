/**
 * The head every authenticated feature router shares: one named Elysia instance (Elysia declares
 * a named plugin once however often it is used), its prefix and OpenAPI tags, the `auth` and
 * `role` macros, and `{ auth: true }` (with the group's early role check, if any) guarding every
 * route declared on it after. A route's own `role`, schemas and `detail` go next to the route.
 */
import { Elysia } from 'elysia';
import { authentication, type RoleCheck } from './auth.ts';
import type { AppContext } from './context.ts';

export interface RouteGroup<Prefix extends string> {
  /** The router's name: one per feature. */
  name: string;
  prefix?: Prefix;
  tags: string[];
  /** The early role check of every route of the group; else each route declares its own. */
  role?: RoleCheck;
}

export function authenticatedRoutes<const Prefix extends string = ''>(ctx: AppContext, group: RouteGroup<Prefix>) {
  // Typed as `{ auth: true }`: `role` resolves nothing, only `auth` adds to the handlers' context.
  const guard: { auth: true } = { auth: true, ...(group.role !== undefined && { role: group.role }) };
  return new Elysia({ name: group.name, prefix: group.prefix as Prefix, detail: { tags: group.tags } })
    .use(authentication(ctx))
    .guard(guard);
}
