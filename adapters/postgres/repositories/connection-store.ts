import type { Kysely, Selectable } from 'kysely';
import type { Connection, ConnectionStore } from '../../../core/connections/connection.ts';
import { conflict } from '../../../core/shared/errors.ts';
import type { ConnectionStatus } from '../../../core/connections/connection-status.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { ConnectionsTable, Database } from '../schema.ts';
import { isUniqueViolation } from '../errors.ts';
import { compiledOnce } from '../compiled-once.ts';
import { isUuid } from '../../../core/shared/ids.ts';

export function connectionStore(db: Kysely<Database>, box: SecretBox): ConnectionStore {
  const toConnection = (row: Selectable<ConnectionsTable>): Connection => ({
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    driver: row.kind,
    status: row.status as ConnectionStatus,
    credentials: row.credentials ? JSON.parse(box.open(row.credentials)) : {},
    phoneNumber: row.phone_number,
    qr: row.qr,
    pairingCode: row.pairing_code,
    statusReason: row.status_reason,
    routingKey: row.routing_key,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
  const columns = (c: Connection) => ({
    name: c.name,
    kind: c.driver,
    status: c.status,
    credentials: Object.keys(c.credentials).length > 0 ? box.seal(JSON.stringify(c.credentials)) : '',
    phone_number: c.phoneNumber,
    qr: c.qr,
    pairing_code: c.pairingCode,
    status_reason: c.statusReason,
    routing_key: c.routingKey,
    updated_at: c.updatedAt,
  });

  return {
    async insert(c) {
      await db
        .insertInto('connections')
        .values({ id: c.id, workspace_id: c.workspaceId, created_at: c.createdAt, ...columns(c) })
        .execute()
        .catch(routingKeyTaken);
    },
    async get(workspaceId, id) {
      if (!isUuid(id)) return undefined;
      const [row] = (await connectionOfWorkspace(db, workspaceId, id)).rows;
      return row && toConnection(row);
    },
    async find(id) {
      if (!isUuid(id)) return undefined;
      const row = await db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toConnection(row);
    },
    async lock(id) {
      if (!isUuid(id)) return undefined;
      const row = await db.selectFrom('connections').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      return row && toConnection(row);
    },
    async list(workspaceId) {
      const rows = await db.selectFrom('connections').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toConnection);
    },
    async count(workspaceId) {
      const row = await db.selectFrom('connections').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async update(c) {
      await db.updateTable('connections').set(columns(c)).where('id', '=', c.id).execute().catch(routingKeyTaken);
    },
    async delete(id) {
      await db.deleteFrom('connections').where('id', '=', id).execute();
    },
    async wantingSession() {
      const rows = await db.selectFrom('connections').selectAll().where('status', 'in', ['CONNECTING', 'QR_PENDING', 'CONNECTED']).execute();
      return rows.map(toConnection);
    },
  };
}

/** Every send reads its connection: compiled once. */
const connectionOfWorkspace = compiledOnce((db: Kysely<Database>, workspaceId: string, id: string) =>
  db.selectFrom('connections').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id),
);

/** One connection per official number (callbacks are routed by it): a second one collides (409), not a 500. */
function routingKeyTaken(error: unknown): never {
  if (isUniqueViolation(error, 'connections_routing_key_idx')) {
    throw conflict('Another connection already uses this phone number id');
  }
  throw error;
}
