import { sql, type Kysely } from 'kysely';
import { BufferJSON, initAuthCreds, proto, type AuthenticationCreds, type AuthenticationState, type CacheStore, type SignalDataSet, type SignalDataTypeMap } from 'baileys';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { findRow } from '../../postgres/keyed-row.ts';

/**
 * A Baileys `AuthenticationState` kept in Postgres (table `baileys_auth`, migration 0004) instead
 * of the library's folder of JSON files (`useMultiFileAuthState`). Same layout, one row per file:
 * the credentials under `kind = 'creds'`, each Signal key under its type and id, values as JSON
 * with binary encoded by `BufferJSON` so Buffers come back as Buffers.
 *
 * With a `fence`, every write first checks (and share-locks) the connection's lease, so a worker
 * that lost its lease to another cannot overwrite the new owner's keys.
 *
 * With a `box` (the service's, as connection credentials), every value is sealed at rest: the
 * credentials and Signal keys are the linked device itself, and a copy of the database must not
 * be enough to impersonate it. Values stored in clear by an earlier version are read as they are
 * and sealed when the session next opens.
 */
export class LeaseLostError extends Error {
  constructor(connectionId: string) {
    super(`lease of connection ${connectionId} is no longer held by this worker`);
    this.name = 'LeaseLostError';
  }
}

export interface PostgresAuthState {
  state: AuthenticationState;
  /** Writes the (mutated in place) credentials; call on `creds.update`. Writes are serialized. */
  saveCreds(): Promise<void>;
}

const CREDS_KIND = 'creds';
const CREDS_ID = '';
/** Rows per statement: well under Postgres's 65535 bind parameters. */
const CHUNK = 500;

export async function usePostgresAuthState(
  db: Kysely<any>,
  connectionId: string,
  options: { fence?: { owner: string }; box?: SecretBox } = {},
): Promise<PostgresAuthState> {
  const { box } = options;
  const encode = (value: unknown) => storedValue(box, value);
  const decode = (text: string) => readStoredValue(box, text);
  const stored = await findRow(db, 'baileys_auth', { connection_id: connectionId, kind: CREDS_KIND, key_id: CREDS_ID }, (row) => row.value as string);
  const creds: AuthenticationCreds = stored !== undefined ? decode(stored) : initAuthCreds();

  const writeFenced = async <T>(work: (trx: Kysely<any>) => Promise<T>): Promise<T> =>
    db.transaction().execute(async (trx) => {
      if (options.fence) {
        const held = await sql<{ owner: string }>`select owner from connection_leases
          where connection_id = ${connectionId} and owner = ${options.fence.owner} for share`.execute(trx);
        if (held.rows.length === 0) throw new LeaseLostError(connectionId);
      }
      return work(trx);
    });

  if (box) await writeFenced((trx) => sealStoredInClear(trx, box, connectionId));

  let credsWrite: Promise<void> = Promise.resolve();

  return {
    state: {
      creds,
      keys: {
        get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const found: { [id: string]: SignalDataTypeMap[T] } = {};
          for (let i = 0; i < ids.length; i += CHUNK) {
            const chunk = ids.slice(i, i + CHUNK);
            if (chunk.length === 0) continue;
            const rows = await db
              .selectFrom('baileys_auth')
              .select(['key_id', 'value'])
              .where('connection_id', '=', connectionId)
              .where('kind', '=', type)
              .where('key_id', 'in', chunk)
              .execute();
            for (const row of rows) {
              let value = decode(row.value);
              if (type === 'app-state-sync-key' && value) value = proto.Message.AppStateSyncKeyData.fromObject(value);
              found[row.key_id] = value;
            }
          }
          return found;
        },
        set: async (data: SignalDataSet) => {
          const upserts: Array<{ connection_id: string; kind: string; key_id: string; value: string }> = [];
          const deletes: Array<{ kind: string; key_id: string }> = [];
          for (const kind of Object.keys(data) as Array<keyof SignalDataSet>) {
            const entries = data[kind] ?? {};
            for (const id of Object.keys(entries)) {
              const value = entries[id];
              if (value === null || value === undefined) deletes.push({ kind, key_id: id });
              else upserts.push({ connection_id: connectionId, kind, key_id: id, value: encode(value) });
            }
          }
          if (upserts.length === 0 && deletes.length === 0) return;
          await writeFenced(async (trx) => {
            for (let i = 0; i < upserts.length; i += CHUNK) {
              await trx
                .insertInto('baileys_auth')
                .values(upserts.slice(i, i + CHUNK))
                .onConflict((oc) =>
                  oc.columns(['connection_id', 'kind', 'key_id']).doUpdateSet({ value: sql`excluded.value`, updated_at: sql`now()` }),
                )
                .execute();
            }
            const byKind = new Map<string, string[]>();
            for (const d of deletes) byKind.set(d.kind, [...(byKind.get(d.kind) ?? []), d.key_id]);
            for (const [kind, ids] of byKind) {
              for (let i = 0; i < ids.length; i += CHUNK) {
                await trx
                  .deleteFrom('baileys_auth')
                  .where('connection_id', '=', connectionId)
                  .where('kind', '=', kind)
                  .where('key_id', 'in', ids.slice(i, i + CHUNK))
                  .execute();
              }
            }
          });
        },
      },
    },
    saveCreds() {
      const value = encode(creds);
      const write = credsWrite.then(() =>
        writeFenced(async (trx) => {
          await trx
            .insertInto('baileys_auth')
            .values({ connection_id: connectionId, kind: CREDS_KIND, key_id: CREDS_ID, value })
            .onConflict((oc) => oc.columns(['connection_id', 'kind', 'key_id']).doUpdateSet({ value, updated_at: sql`now()` }))
            .execute();
        }),
      );
      credsWrite = write.catch(() => {});
      return write;
    },
  };
}

/** Whether a connection has stored credentials (a pairing that can resume without a QR). */
export async function hasAuthState(db: Kysely<any>, connectionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('baileys_auth')
    .select('connection_id')
    .where('connection_id', '=', connectionId)
    .where('kind', '=', CREDS_KIND)
    .executeTakeFirst();
  return row !== undefined;
}

/** Forgets a connection's pairing: credentials and every key. */
export async function clearAuthState(db: Kysely<any>, connectionId: string): Promise<void> {
  await db.deleteFrom('baileys_auth').where('connection_id', '=', connectionId).execute();
}

export function encode(value: unknown): string {
  return JSON.stringify(value, BufferJSON.replacer);
}

export function decode<T = any>(text: string): T {
  return JSON.parse(text, BufferJSON.reviver) as T;
}

/** A sealed value (`v1.…`, secret-box.ts); JSON in clear never starts so. */
const isSealed = (text: string) => text.startsWith('v1.');

/** A value as stored: its JSON, sealed when there is a box. */
export function storedValue(box: SecretBox | undefined, value: unknown): string {
  return box ? box.seal(encode(value)) : encode(value);
}

/** A stored value, sealed or (from before sealing) in clear. */
export function readStoredValue<T = any>(box: SecretBox | undefined, text: string): T {
  if (!isSealed(text)) return decode<T>(text);
  if (!box) throw new Error('a sealed Baileys auth value and no key to open it');
  return decode<T>(box.open(text));
}

/** Seals the connection's values still stored in clear (written before sealing), in place. */
async function sealStoredInClear(db: Kysely<any>, box: SecretBox, connectionId: string): Promise<void> {
  const clear = await db
    .selectFrom('baileys_auth')
    .select(['kind', 'key_id', 'value'])
    .where('connection_id', '=', connectionId)
    .where('value', 'not like', 'v1.%')
    .execute();
  for (const row of clear) {
    await db
      .updateTable('baileys_auth')
      .set({ value: box.seal(row.value) })
      .where('connection_id', '=', connectionId)
      .where('kind', '=', row.kind)
      .where('key_id', '=', row.key_id)
      .execute();
  }
}

/**
 * The in-memory cache in front of the key store (`makeCacheableSignalKeyStore`), one per session
 * and kept across its reconnects: the library's default cache starts a timer per instance that is
 * never stopped, which a session reconnecting for hours would pile up. Entries live five minutes.
 */
export function createKeyCache(ttlMs = 5 * 60 * 1000, now: () => number = Date.now): CacheStore {
  const entries = new Map<string, { value: unknown; expires: number }>();
  return {
    get<T>(key: string): T | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expires <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value as T;
    },
    set<T>(key: string, value: T): void {
      if (entries.size >= 10_000) {
        const t = now();
        for (const [k, e] of entries) if (e.expires <= t) entries.delete(k);
      }
      entries.set(key, { value, expires: now() + ttlMs });
    },
    del(key: string): void {
      entries.delete(key);
    },
    flushAll(): void {
      entries.clear();
    },
  };
}

/**
 * Replaces a connection's pairing with imported session material (the sync flow), sealed like
 * every stored value, inside the caller's transaction: the old credentials and keys go first, so
 * nothing of the previous pairing mixes with the new one.
 */
export async function replaceAuthState(
  db: Kysely<any>,
  box: SecretBox | undefined,
  connectionId: string,
  material: { creds: unknown; keys: Record<string, Record<string, unknown>> },
): Promise<void> {
  await clearAuthState(db, connectionId);
  const rows = [{ connection_id: connectionId, kind: CREDS_KIND, key_id: CREDS_ID, value: storedValue(box, material.creds) }];
  for (const [kind, entries] of Object.entries(material.keys)) {
    for (const [id, value] of Object.entries(entries)) rows.push({ connection_id: connectionId, kind, key_id: id, value: storedValue(box, value) });
  }
  for (let i = 0; i < rows.length; i += CHUNK) await db.insertInto('baileys_auth').values(rows.slice(i, i + CHUNK)).execute();
}
