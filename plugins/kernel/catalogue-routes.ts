/**
 * The routes of a workspace catalogue (labels, teams, canned responses, SLA policies…), declared
 * once: a page of items, create (201), one item, a change, a delete (`{ id, deleted: true }`).
 * The plugin says what differs — its stores, view and presenter, each use case with its body,
 * role, extra error answers and summary — and keeps its schemas in its own file. Reads run on
 * `ctx.storage.read`, writes in one `ctx.storage.transaction`, with the caller as the actor.
 * Every operation is optional; a catalogue's other routes go on the returned router, in their own
 * `.guard({ auth: true, … })` (its `auth` and `role` macros are there), or with `.use`.
 */
import { Elysia, t, type Static, type TSchema } from 'elysia';
import type { Actor } from '../../core/identity/identity.ts';
import { pageRequest, type Page, type PageRequest } from '../../core/shared/pagination.ts';
import type { RoleCheck } from '../../adapters/http/auth.ts';
import type { PluginContext, StoreFactory } from './context.ts';
import { authentication, authErrors, PageOf, PageQuery, presentPage } from './http.ts';

export interface Catalogue<S, T, C extends TSchema, U extends TSchema> {
  /** The router's name (Elysia declares a named router once). */
  name: string;
  prefix: string;
  tags: string[];
  /** The early role check of every route of the catalogue; else each operation declares its own. */
  role?: RoleCheck;
  stores: StoreFactory<S>;
  /** What one item looks like on the wire, and how an item becomes that (some views depend on who asks). */
  view: TSchema;
  present: (item: T, actor: Actor) => unknown;
  // The operations are declared in the order they are written here (the OpenAPI document lists
  // a path's methods in that order).
  /** `GET ''`: a page of items (`page`, `per_page`, `s`), each presented. */
  list?: Operation & { run: (stores: NoInfer<S>, actor: Actor, page: PageRequest) => Promise<Page<T>> };
  /** `POST ''`: 201 with the new item, created in one transaction. */
  create?: Operation & { body: C; run: (stores: NoInfer<S>, actor: Actor, body: Static<C>) => Promise<T> };
  /** `GET /:id`: one item. */
  get?: Operation & { run: (stores: NoInfer<S>, actor: Actor, id: string) => Promise<T> };
  /** `PATCH /:id`: the changed item, changed in one transaction. */
  update?: Operation & { body: U; run: (stores: NoInfer<S>, actor: Actor, id: string, body: Static<U>) => Promise<T> };
  /** `DELETE /:id`: `{ id, deleted: true }` once deleted in one transaction. */
  remove?: Operation & { run: (stores: NoInfer<S>, actor: Actor, id: string) => Promise<unknown> };
}

/** What a route of the catalogue declares besides its use case. */
export interface Operation {
  /** The early role check (403 before the body is validated); left out where core checks the role. */
  role?: RoleCheck;
  /** Error answers beyond `authErrors` (a 409, a 404 of another shape). */
  errors?: Record<number, TSchema>;
  summary: string;
  description?: string;
}

export function catalogueRoutes<S, T, C extends TSchema, U extends TSchema>(ctx: PluginContext, catalogue: Catalogue<S, T, C, U>) {
  const { storage } = ctx;
  const { stores, view, present } = catalogue;
  const declare: { [K in OperationName]: (app: Group) => Group } = {
    list: (app) =>
      app.get(
        '',
        async ({ actor, query }: { actor: Actor; query: Record<string, string | undefined> }) =>
          presentPage(await catalogue.list!.run(storage.read(stores), actor, pageRequest(query)), (item) => present(item, actor)),
        route(catalogue.list!, { query: PageQuery }, 200, PageOf(view)),
      ),
    create: (app) =>
      app.post(
        '',
        async ({ actor, body, set }: { actor: Actor; body: Static<C>; set: { status?: number | string } }) => {
          const created = await storage.transaction(stores, (s) => catalogue.create!.run(s, actor, body));
          set.status = 201;
          return present(created, actor);
        },
        route(catalogue.create!, { body: catalogue.create!.body }, 201, view),
      ),
    get: (app) =>
      app.get('/:id', async ({ actor, params }: ById) => present(await catalogue.get!.run(storage.read(stores), actor, params.id), actor), route(catalogue.get!, { params: Id }, 200, view)),
    update: (app) =>
      app.patch(
        '/:id',
        async ({ actor, params, body }: ById & { body: Static<U> }) =>
          present(await storage.transaction(stores, (s) => catalogue.update!.run(s, actor, params.id, body)), actor),
        route(catalogue.update!, { params: Id, body: catalogue.update!.body }, 200, view),
      ),
    remove: (app) =>
      app.delete(
        '/:id',
        async ({ actor, params }: ById) => {
          await storage.transaction(stores, (s) => catalogue.remove!.run(s, actor, params.id));
          return { id: params.id, deleted: true as const };
        },
        route(catalogue.remove!, { params: Id }, 200, Deleted),
      ),
  };
  const written = (Object.keys(catalogue) as OperationName[]).filter((key) => key in declare && catalogue[key] !== undefined);

  return new Elysia({ name: catalogue.name, prefix: catalogue.prefix, detail: { tags: catalogue.tags } })
    .use(authentication(ctx))
    .guard({ auth: true, ...(catalogue.role !== undefined && { role: catalogue.role }) }, (app) => written.reduce((group, key) => declare[key](group), app as Group) as typeof app);
}

type OperationName = 'list' | 'create' | 'get' | 'update' | 'remove';
// The group's handlers are typed by hand: the routes are declared in a loop, where Elysia's
// chained types cannot follow.
type Group = any;
type ById = { actor: Actor; params: { id: string } };

const Id = t.Object({ id: t.String() });
const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) });

/**
 * A route's options: its role first (checked at `transform`, before validation), its schemas, the
 * answers, and a fresh `detail` (Elysia writes the router's tags into it).
 */
function route(operation: Operation, schemas: { query?: TSchema; params?: TSchema; body?: TSchema }, status: number, answer: TSchema) {
  return {
    ...(operation.role !== undefined && { role: operation.role }),
    ...schemas,
    response: { ...authErrors, ...operation.errors, [status]: answer },
    detail: { summary: operation.summary, ...(operation.description !== undefined && { description: operation.description }) },
  };
}
