import { randomBytes } from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { Kysely } from 'kysely';
import type { Database } from '../postgres/schema.ts';

/** The service's own keys: the signing key of links and tickets, the key that seals credentials. */
export interface ServiceKeys {
  signing: Uint8Array;
  sealing: Uint8Array;
}

/**
 * HKDF's `info` for the signing key. A label of its own keeps the signing key independent of the
 * sealing key (SECRET_KEY itself): knowing one says nothing about the other.
 */
const SIGNING_INFO = new TextEncoder().encode('switchboard/signing-key/v1');

/**
 * Loads the keys. `SECRET_KEY` (base64, 32 bytes), when set, is the root of both: it seals
 * credentials itself, and the signing key of every link and ticket (password set-up, media
 * downloads, upload tickets, attachments, form CSRF) is derived from it with HKDF-SHA256, so a
 * copy of the database alone can neither read sealed credentials nor forge a link. A signing
 * key stored by an earlier start is then deleted: links it signed are refused from now on.
 *
 * Without `SECRET_KEY`, both keys are random, created on first start and kept in
 * `service_keys`: a database dump then holds them.
 */
export async function loadServiceKeys(db: Kysely<Database>, secretKey: string | undefined): Promise<ServiceKeys> {
  if (!secretKey) return { signing: await storedKey(db, 'signing'), sealing: await storedKey(db, 'sealing') };
  const root = decodeKey(secretKey);
  await db.deleteFrom('service_keys').where('name', '=', 'signing').execute();
  return { signing: hkdf(sha256, root, undefined, SIGNING_INFO, 32), sealing: root };
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
