import type { Kysely, Selectable } from 'kysely';
import type { Connection, ConnectionStore } from '../../../core/connections/connection.ts';
import { conflict } from '../../../core/shared/errors.ts';
import type { ConnectionStatus } from '../../../core/connections/connection-status.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { ConnectionsTable, Database } from '../schema.ts';
import { uniqueViolationAs } from '../errors.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import { compiledOnce } from '../compiled-once.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import { findById, lockById } from '../keyed-row.ts';

export function connectionStore(db: Kysely<Database>, box: SecretBox): ConnectionStore {
  // The column `kind` is the connection's driver; its credentials are stored sealed, as JSON.
  const toConnection = ({ kind, ...row }: Selectable<ConnectionsTable>): Connection => ({
    ...camelCased(row),
    driver: kind,
    status: row.status as ConnectionStatus,
    credentials: row.credentials ? JSON.parse(box.open(row.credentials)) : {},
  });
  const toRow = ({ driver, ...c }: Connection) => ({
    ...snakeCased(c),
    kind: driver,
    credentials: Object.keys(c.credentials).length > 0 ? box.seal(JSON.stringify(c.credentials)) : '',
  });

  return {
    async insert(c) {
      await db
        .insertInto('connections')
        .values(toRow(c))
        .execute()
        .catch(routingKeyTaken);
    },
    async get(workspaceId, id) {
      if (!isUuid(id)) return undefined;
      const [row] = (await connectionOfWorkspace(db, workspaceId, id)).rows;
      return row && toConnection(row);
    },
    async find(id) {
      return findById(db, 'connections', id, toConnection);
    },
    async lock(id) {
      return lockById(db, 'connections', id, toConnection);
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
      const { id, workspace_id: _workspaceId, created_at: _createdAt, ...changes } = toRow(c);
      await db.updateTable('connections').set(changes).where('id', '=', id).execute().catch(routingKeyTaken);
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
const routingKeyTaken = uniqueViolationAs('connections_routing_key_idx', () => conflict('Another connection already uses this phone number id'));
