import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../postgres/schema.ts';

/** The service's own keys: the signing key of links and tickets, the key that seals credentials. */
export interface ServiceKeys {
  signing: Uint8Array;
  sealing: Uint8Array;
}

/**
 * Loads the keys, creating them on first start. `SECRET_KEY` (base64, 32 bytes), when set,
 * seals credentials instead of the stored key, so a database dump alone does not reveal them.
 */
export async function loadServiceKeys(db: Kysely<Database>, secretKey: string | undefined): Promise<ServiceKeys> {
  const signing = await storedKey(db, 'signing');
  const sealing = secretKey ? decodeKey(secretKey) : await storedKey(db, 'sealing');
  return { signing, sealing };
}

async function storedKey(db: Kysely<Database>, name: string): Promise<Uint8Array> {
  await db
    .insertInto('service_keys')
    .values({ name, secret: randomBytes(32).toString('base64') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_keys').select('secret').where('name', '=', name).executeTakeFirstOrThrow();
  return new Uint8Array(Buffer.from(row.secret, 'base64'));
}

function decodeKey(value: string): Uint8Array {
  const key = Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error('SECRET_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  return new Uint8Array(key);
}
