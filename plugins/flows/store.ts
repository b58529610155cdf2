import type { Kysely } from 'kysely';
import type { Database, DatabaseHandle, PluginContext } from '../kernel/storage.ts';
import { camelCased, messagingStores, snakeCased } from '../kernel/storage.ts';
import type { FlowKey, FlowKeyStore, FlowStores } from '../../core/flows/flows.ts';

/** The flows plugin's table (migrations/0001_flows.ts); the base schema stays untouched. */
export interface FlowEncryptionKeysTable {
  phone_number_id: string;
  endpoint_id: string;
  workspace_id: string;
  connection_id: string;
  public_key: string;
  /** Sealed. */
  private_key: string;
  /** Sealed. */
  app_secret: string;
  registered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface FlowsDatabase extends Database {
  flow_encryption_keys: FlowEncryptionKeysTable;
}

/** The ports of the Flow use cases: the connection that owns the number, and the number's key. */
export function flowStores(db: DatabaseHandle, ctx: PluginContext): FlowStores {
  return { connections: messagingStores(db, ctx).connections, flowKeys: flowKeyStore(db, ctx) };
}

/** Flow key pairs by phone number, their private half and the app secret sealed at rest. */
export function flowKeyStore(db: DatabaseHandle, { box }: Pick<PluginContext, 'box'>): FlowKeyStore {
  const flows = db as unknown as Kysely<FlowsDatabase>;
  const open = ({ public_key, private_key, app_secret, ...row }: FlowEncryptionKeysTable): FlowKey => ({
    ...camelCased(row),
    publicKeyPem: public_key,
    privateKeyPem: box.open(private_key),
    appSecret: box.open(app_secret),
  });
  return {
    async byPhoneNumber(phoneNumberId: string): Promise<FlowKey | undefined> {
      const row = await flows.selectFrom('flow_encryption_keys').selectAll().where('phone_number_id', '=', phoneNumberId).executeTakeFirst();
      return row && open(row);
    },
    async byEndpoint(endpointId: string): Promise<FlowKey | undefined> {
      if (!/^[0-9a-f-]{36}$/i.test(endpointId)) return undefined;
      const row = await flows.selectFrom('flow_encryption_keys').selectAll().where('endpoint_id', '=', endpointId).executeTakeFirst();
      return row && open(row);
    },
    async save({ publicKeyPem, privateKeyPem, appSecret, ...key }: FlowKey): Promise<void> {
      const row: FlowEncryptionKeysTable = { ...snakeCased(key), public_key: publicKeyPem, private_key: box.seal(privateKeyPem), app_secret: box.seal(appSecret) };
      // The endpoint changes only when the number changes hands (a new pair for a new workspace).
      const { phone_number_id: _, created_at: __, ...changes } = row;
      await flows.insertInto('flow_encryption_keys').values(row).onConflict((oc) => oc.column('phone_number_id').doUpdateSet(changes)).execute();
    },
  };
}

