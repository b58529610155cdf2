import { t } from 'elysia';
import QRCode from 'qrcode';
import {
  createConnection,
  deleteConnection,
  getConnection,
  listConnections,
  requestConnect,
  requestDisconnect,
  updateConnection,
} from '../../../core/connections/connections.ts';
import type { Connection } from '../../../core/connections/connection.ts';
import type { Actor } from '../../../core/identity/identity.ts';
import { CONNECTION_STATUSES } from '../../../core/connections/connection-status.ts';
import { capabilityFlags } from '../../../core/connections/driver.ts';
import { confirmChangedCredentials, confirmNewCredentials } from '../../../core/connections/credential-claims.ts';
import { messagingDeps, messagingStores, poolMessagingStores } from '../../connections/stores.ts';
import { authenticatedRoutes } from '../route-group.ts';
import type { AppContext } from '../context.ts';
import { authErrors, CodedError, iso, StandardError, Timestamp, Uuid } from '../schemas.ts';

export const ConnectionView = t.Object({
  id: Uuid,
  name: t.String(),
  driver: t.String({ description: 'Network driver: `sandbox`, `cloud-api` (official), `baileys` (unofficial, QR)' }),
  official: t.Boolean(),
  status: t.UnionEnum(CONNECTION_STATUSES),
  statusReason: t.Nullable(t.String()),
  phoneNumber: t.Nullable(t.String()),
  qr: t.Nullable(t.String({ description: 'While QR_PENDING: the QR code as text' })),
  qrDataUrl: t.Nullable(t.String({ description: 'While QR_PENDING: the QR code as a PNG data URL' })),
  pairingCode: t.Nullable(t.String({ description: 'While QR_PENDING: the code to type on the phone instead of scanning' })),
  capabilities: t.Object({
    sendWindow: t.Boolean(),
    templates: t.Boolean(),
    carousels: t.Boolean(),
    flows: t.Boolean(),
    typing: t.Boolean(),
  }),
  credentials: t.Record(t.String(), t.String(), { description: 'Driver settings with secrets masked to their last 4 characters' }),
  callbackUrl: t.Nullable(t.String({ description: 'Official connections: the URL to register as the provider callback' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const OfficialCredentials = t.Object(
  {
    phoneNumberId: t.Optional(t.String()),
    businessAccountId: t.Optional(t.String()),
    accessToken: t.Optional(t.String()),
    appSecret: t.Optional(t.String()),
    verifyToken: t.Optional(t.String()),
  },
  { description: 'Official (cloud-api) connections: the platform credentials' },
);

const NotFound = { 404: t.Union([CodedError, StandardError]) };

/** What disconnect and logout declare alike: the same input (none) and answers. */
const Disconnection = {
  role: ['connections', 'write'] as const,
  params: t.Object({ id: t.String() }),
  body: t.Optional(t.Object({}, { description: 'No fields' })),
  response: { ...authErrors, ...NotFound, 201: ConnectionView, 409: StandardError },
};

/** Connections (spec 1.2, 3.6, 4.3): create, list, read, edit, delete, pair, disconnect. */
export function connectionRoutes(ctx: AppContext) {
  const deps = messagingDeps(ctx);
  const inTransaction = <T>(work: (stores: ReturnType<typeof messagingStores>) => Promise<T>) =>
    ctx.db.transaction().execute((trx) => work(messagingStores(trx, ctx)));
  // Disconnect and logout: 201 with the connection once its session is closed; a logout also ends the pairing.
  const disconnect = async (actor: Actor, id: string, how: { logout: boolean }, set: { status?: number | string }) => {
    const view = await present(ctx, await inTransaction((stores) => requestDisconnect(stores, deps, actor, id, how)));
    set.status = 201;
    return view;
  };

  return authenticatedRoutes(ctx, { name: 'routes.connections', prefix: '/v3/connections', tags: ['Connections'] })
    .post(
      '',
      async ({ actor, body, set }) => {
        const input = { name: body.name, driver: body.driver ?? 'sandbox', credentials: body.credentials };
        await confirmNewCredentials(poolMessagingStores(ctx).identity, deps, actor, input);
        const connection = await inTransaction((stores) => createConnection(stores, deps, actor, input));
        set.status = 201;
        return present(ctx, connection);
      },
      {
        role: ['connections', 'write'],
        body: t.Object({
          name: t.String({ minLength: 1, maxLength: 120, error: 'must be a string of 1 to 120 characters' }),
          driver: t.Optional(t.String({ description: 'Default `sandbox`. `baileys` pairs a real account by QR; `cloud-api` needs credentials and a paid plan.' })),
          credentials: t.Optional(OfficialCredentials),
        }),
        // 422: the platform does not confirm that the credentials own the phone number id; 502: it could not be asked.
        response: { ...authErrors, 201: ConnectionView, 422: StandardError, 502: StandardError },
        detail: { summary: 'Create a connection' },
      },
    )
    .get('', async ({ actor }) => Promise.all((await listConnections(poolMessagingStores(ctx).connections, actor)).map((c) => present(ctx, c))), {
      response: { ...authErrors, 200: t.Array(ConnectionView) },
      detail: { summary: 'Connections of the workspace, with their status' },
    })
    .get('/:id', async ({ actor, params }) => present(ctx, await getConnection(poolMessagingStores(ctx).connections, actor, params.id)), {
      params: t.Object({ id: t.String() }),
      response: { ...authErrors, ...NotFound, 200: ConnectionView },
      detail: { summary: 'One connection (with its QR code while pairing)' },
    })
    .patch(
      '/:id',
      async ({ actor, params, body }) => {
        await confirmChangedCredentials(poolMessagingStores(ctx).connections, deps, actor, params.id, body);
        return present(ctx, await inTransaction((stores) => updateConnection(stores, deps, actor, params.id, body)));
      },
      {
        role: ['connections', 'write'],
        params: t.Object({ id: t.String() }),
        body: t.Object({ name: t.Optional(t.String({ minLength: 1, maxLength: 120 })), credentials: t.Optional(OfficialCredentials) }),
        response: { ...authErrors, ...NotFound, 200: ConnectionView, 422: StandardError, 502: StandardError },
        detail: { summary: 'Rename, or change credentials (fields left out keep their value)' },
      },
    )
    .delete(
      '/:id',
      async ({ actor, params }) => {
        await inTransaction((stores) => deleteConnection(stores, actor, params.id));
        return { id: params.id, deleted: true as const };
      },
      {
        role: ['connections', 'write'],
        params: t.Object({ id: t.String() }),
        response: { ...authErrors, ...NotFound, 200: t.Object({ id: t.String(), deleted: t.Literal(true) }) },
        detail: { summary: 'Delete a connection; its session is ended and the pairing removed' },
      },
    )
    .post(
      '/:id/connect',
      async ({ actor, params, body, set }) => {
        await inTransaction((stores) => requestConnect(stores, deps, actor, params.id, { pairingPhoneNumber: body?.pairingPhoneNumber }));
        const view = await present(ctx, await settled(ctx, actor.workspaceId, params.id));
        set.status = 201;
        return view;
      },
      {
        role: ['connections', 'write'],
        params: t.Object({ id: t.String() }),
        body: t.Optional(
          t.Object({
            pairingPhoneNumber: t.Optional(t.String({ description: 'Unofficial: ask for a pairing code for this number instead of a QR code' })),
          }),
        ),
        response: { ...authErrors, ...NotFound, 201: ConnectionView, 409: StandardError },
        detail: {
          summary: 'Pair or resume the session; answers once a QR code, pairing code or the open session is there (up to 5 s), else with CONNECTING',
        },
      },
    )
    .post('/:id/disconnect', ({ actor, params, set }) => disconnect(actor, params.id, { logout: false }, set), {
      ...Disconnection,
      detail: { summary: 'Close the session and keep the pairing' },
    })
    .post('/:id/logout', ({ actor, params, set }) => disconnect(actor, params.id, { logout: true }, set), {
      ...Disconnection,
      detail: { summary: 'End the pairing: the next connect starts from a new QR code' },
    });
}

/** Waits briefly for the worker to move the connection past CONNECTING (QR shown or open). */
export async function settled(ctx: AppContext, workspaceId: string, id: string): Promise<Connection> {
  const connections = poolMessagingStores(ctx).connections;
  const deadline = Date.now() + 5_000;
  for (;;) {
    const connection = (await connections.get(workspaceId, id))!;
    if (connection.status !== 'CONNECTING' || Date.now() > deadline) return connection;
    await Bun.sleep(100);
  }
}

const SECRET_FIELDS = new Set(['accessToken', 'appSecret', 'verifyToken']);

export async function present(ctx: AppContext, c: Connection) {
  const driver = ctx.drivers.get(c.driver);
  const capabilities = driver?.capabilities;
  return {
    id: c.id,
    name: c.name,
    driver: c.driver,
    official: capabilities?.official ?? false,
    status: c.status,
    statusReason: c.statusReason,
    phoneNumber: c.phoneNumber,
    qr: c.qr,
    qrDataUrl: c.qr ? await QRCode.toDataURL(c.qr) : null,
    pairingCode: c.pairingCode,
    capabilities: capabilityFlags(capabilities),
    credentials: Object.fromEntries(Object.entries(c.credentials).map(([k, v]) => [k, SECRET_FIELDS.has(k) ? `••••${v.slice(-4)}` : v])),
    callbackUrl: driver?.callbacks ? `${ctx.config.publicUrl}/v3/webhooks/whatsapp/${c.id}` : null,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
  };
}
