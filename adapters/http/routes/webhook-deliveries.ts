/**
 * The delivery history and redelivery routes of every kind of webhook endpoint: connection
 * webhooks, helpdesk webhooks and agent bots share one delivery engine, so they share these two
 * routes too (`GET /:id/deliveries`, `POST /:id/deliveries/:deliveryId/redeliver`). Each kind says
 * only how the actor's endpoint is found and checked — its use cases — and where its stores are.
 */
import { Elysia, t } from 'elysia';
import type { Actor } from '../../../core/identity/identity.ts';
import type { Capability } from '../../../core/identity/roles.ts';
import { pageRequest, type Page, type PageRequest } from '../../../core/shared/pagination.ts';
import type { Delivery, DeliveryAttempt, DispatchDeps } from '../../../core/webhooks/dispatch.ts';
import type { Storage, StoreFactory } from '../../postgres/storage.ts';
import type { authentication } from '../auth.ts';
import { authErrors, iso, PageOf, PageQuery, presentPage, StandardError, Timestamp, Uuid } from '../schemas.ts';

/** One kind of webhook endpoint as its delivery routes see it. */
export interface DeliveryEndpoints<S, C> {
  /** The authentication the kind's other routes use (the same `auth` and `role` macros). */
  authentication: ReturnType<typeof authentication>;
  /** The capability managing the kind's endpoints needs (the routes' early `role` check). */
  role: Capability;
  storage: Storage<C>;
  /** The stores both use cases run on: on the pool for the history, in one transaction to redeliver. */
  stores: StoreFactory<S, C>;
  dispatch: DispatchDeps;
  /** The history of the actor's endpoint `id` (404 when it is not theirs). */
  history(stores: S, actor: Actor, id: string, request: PageRequest): Promise<Page<DeliveryWithAttempts>>;
  /** A failed delivery of the actor's endpoint `id` sent again (404 when either is not theirs, 409 unless FAILED). */
  redeliver(stores: S, dispatch: DispatchDeps, actor: Actor, id: string, deliveryId: string): Promise<Delivery>;
  /** What the history is, in the kind's words (else the general summary). */
  historySummary?: string;
}

export type DeliveryWithAttempts = Delivery & { attemptLog: DeliveryAttempt[] };

/** The two routes, under the prefix of the router that uses them (after its own routes). */
export function deliveryRoutes<S, C>(endpoints: DeliveryEndpoints<S, C>) {
  const { storage, stores } = endpoints;
  // Fresh `detail` objects each time: Elysia writes the router's tags into a route's detail, and a
  // detail shared between routers once gave one router's tags to the other's routes.
  const historyRoute = { ...DELIVERY_HISTORY_ROUTE, detail: { summary: endpoints.historySummary ?? DELIVERY_HISTORY_ROUTE.detail.summary } };
  const redeliveryRoute = { ...REDELIVERY_ROUTE, detail: { ...REDELIVERY_ROUTE.detail } };

  return new Elysia()
    .use(endpoints.authentication)
    .guard({ auth: true, role: endpoints.role }, (app) =>
      app
        .get(
          '/:id/deliveries',
          async ({ actor, params, query }) => presentPage(await endpoints.history(storage.read(stores), actor, params.id, pageRequest(query)), presentDelivery),
          historyRoute,
        )
        .post(
          '/:id/deliveries/:deliveryId/redeliver',
          async ({ actor, params, set }) => {
            const delivery = await storage.transaction(stores, (s) => endpoints.redeliver(s, endpoints.dispatch, actor, params.id, params.deliveryId));
            set.status = 201;
            return presentDelivery({ ...delivery, attemptLog: [] });
          },
          redeliveryRoute,
        ),
    );
}

const AttemptView = t.Object({ attempt: t.Integer(), at: Timestamp, statusCode: t.Nullable(t.Integer()), error: t.Nullable(t.String()), durationMs: t.Integer() });
const DeliveryView = t.Object({
  id: Uuid,
  event: t.String(),
  eventIds: t.Array(t.String()),
  state: t.UnionEnum(['PENDING', 'RETRYING', 'SUCCEEDED', 'FAILED']),
  attempts: t.Integer(),
  attemptLog: t.Array(AttemptView),
  body: t.String({ description: 'The exact JSON body sent' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const NotFound = { 404: StandardError };

/** The delivery history route's schemas (also for a history without redelivery, as campaigns'). */
export const DELIVERY_HISTORY_ROUTE = {
  params: t.Object({ id: t.String() }),
  query: PageQuery,
  response: { ...authErrors, ...NotFound, 200: PageOf(DeliveryView) },
  detail: { summary: 'Delivery history, newest first, with every attempt (time, status code or error, duration)' },
};

const REDELIVERY_ROUTE = {
  params: t.Object({ id: t.String(), deliveryId: t.String() }),
  body: t.Optional(t.Object({}, { description: 'No fields' })),
  response: { ...authErrors, ...NotFound, 201: DeliveryView, 409: StandardError },
  detail: { summary: 'Send a failed delivery again (a fresh round of three attempts)' },
};

export function presentDelivery(d: DeliveryWithAttempts) {
  return {
    id: d.id,
    event: d.event,
    eventIds: d.eventIds,
    state: d.state,
    attempts: d.attempts,
    attemptLog: d.attemptLog.map((a) => ({ attempt: a.attempt, at: iso(a.at), statusCode: a.statusCode, error: a.error, durationMs: a.durationMs })),
    body: d.body,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
  };
}
