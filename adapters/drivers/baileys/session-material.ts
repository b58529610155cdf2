import { BufferJSON } from 'baileys';
import { badRequest } from '../../../core/shared/errors.ts';
import type { ImportedSession } from '../../../core/connections/driver.ts';

/**
 * The multi-device session material a companion hands over in the sync flow (spec 4.3): the
 * auth state of WhatsApp Web multi-device as Baileys keeps it. Two shapes are accepted:
 *
 * - `{ creds, keys? }`: `creds` is `creds.json`; `keys` maps a Signal key type to its entries by
 *   id, as `AuthenticationState.keys` stores them (a Postgres or Redis auth state exports this);
 * - `{ files }`: the folder of `useMultiFileAuthState` as is, file name → parsed JSON content
 *   (`creds.json`, `pre-key-1.json`, `session-….json`, …).
 *
 * Binary values are in `BufferJSON` form (`{ "type": "Buffer", "data": "<base64>" }`), as both
 * write them. Only `creds` is required: a session without its Signal keys still opens (the network
 * re-establishes them), with some messages from the first minutes possibly unreadable.
 */
export interface SessionMaterial {
  creds: Record<string, unknown>;
  keys: Record<string, Record<string, unknown>>;
}

/** The Signal key types of Baileys 7 (`SignalDataTypeMap`). Longest first: file names are matched by prefix. */
export const KEY_TYPES = [
  'app-state-sync-version',
  'app-state-sync-key',
  'sender-key-memory',
  'identity-key',
  'device-list',
  'lid-mapping',
  'sender-key',
  'pre-key',
  'session',
  'tctoken',
] as const;

const MAX_KEY_ID = 512;

/** Checks the material; every problem is listed at once (400), nothing is stored. */
export function inspectSessionMaterial(input: unknown): ImportedSession & { material: SessionMaterial } {
  const problems: string[] = [];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw badRequest(['body must be a JSON object with `creds` (and `keys`) or `files`']);
  // Revived once: Buffers come back as Buffers, as the library reads them.
  const body = JSON.parse(JSON.stringify(input), BufferJSON.reviver) as Record<string, unknown>;
  let creds: unknown;
  let keys: Record<string, Record<string, unknown>> = {};
  if (body.files !== undefined) {
    if (body.creds !== undefined || body.keys !== undefined) problems.push('body must have either `files` or `creds`/`keys`, not both');
    ({ creds, keys } = fromFiles(body.files, problems));
  } else {
    creds = body.creds;
    if (creds === undefined) problems.push('body.creds is required (the content of creds.json)');
    if (body.keys !== undefined) keys = checkKeys(body.keys, problems);
  }
  const phoneNumber = creds === undefined ? undefined : checkCreds(creds, problems);
  if (problems.length > 0 || !phoneNumber) throw badRequest(problems.length > 0 ? problems : ['body.creds.me.id must be the account JID']);
  return { phoneNumber, material: { creds: withDefaults(creds as Record<string, unknown>), keys } };
}

function fromFiles(files: unknown, problems: string[]): { creds: unknown; keys: Record<string, Record<string, unknown>> } {
  const keys: Record<string, Record<string, unknown>> = {};
  if (!isObject(files)) {
    problems.push('body.files must be an object of file name → JSON content');
    return { creds: undefined, keys };
  }
  let creds: unknown;
  const unknown: string[] = [];
  for (const [name, value] of Object.entries(files)) {
    if (name === 'creds.json') {
      creds = value;
      continue;
    }
    const type = KEY_TYPES.find((t) => name.startsWith(`${t}-`) && name.endsWith('.json'));
    if (!type) {
      unknown.push(name);
      continue;
    }
    // `useMultiFileAuthState` wrote `/` as `__` and `:` as `-`; sender keys are `<group>::<sender>::<device>`.
    let id = name.slice(type.length + 1, -'.json'.length).replace(/__/g, '/');
    if (type === 'sender-key') id = id.replace(/--/g, '::');
    if (value !== null && value !== undefined) (keys[type] ??= {})[id] = value;
  }
  if (unknown.length > 0) problems.push(`body.files has names that are not a Baileys auth file: ${unknown.slice(0, 5).map((n) => JSON.stringify(n.slice(0, 80))).join(', ')}${unknown.length > 5 ? ', …' : ''}`);
  if (creds === undefined) problems.push('body.files must contain creds.json');
  return { creds, keys };
}

function checkKeys(keys: unknown, problems: string[]): Record<string, Record<string, unknown>> {
  if (!isObject(keys)) {
    problems.push('body.keys must be an object of key type → { id: value }');
    return {};
  }
  const result: Record<string, Record<string, unknown>> = {};
  for (const [type, entries] of Object.entries(keys)) {
    if (!(KEY_TYPES as readonly string[]).includes(type)) {
      problems.push(`body.keys.${type.slice(0, 40)} is not a Baileys key type (one of ${KEY_TYPES.join(', ')})`);
      continue;
    }
    if (!isObject(entries)) {
      problems.push(`body.keys.${type} must be an object of id → value`);
      continue;
    }
    for (const [id, value] of Object.entries(entries)) {
      if (id === '' || id.length > MAX_KEY_ID) problems.push(`body.keys.${type} has an id that is empty or longer than ${MAX_KEY_ID} characters`);
      else if (value !== null && value !== undefined) (result[type] ??= {})[id] = value;
    }
  }
  return result;
}

/** The account's number, once the creds are those of a paired device; problems are added to the list. */
function checkCreds(creds: unknown, problems: string[]): string | undefined {
  if (!isObject(creds)) {
    problems.push('body.creds must be an object (the content of creds.json)');
    return undefined;
  }
  for (const field of ['noiseKey', 'pairingEphemeralKeyPair', 'signedIdentityKey'] as const) checkKeyPair(creds[field], `body.creds.${field}`, problems);
  const signedPreKey = creds.signedPreKey;
  if (!isObject(signedPreKey)) problems.push('body.creds.signedPreKey must be an object');
  else {
    checkKeyPair(signedPreKey.keyPair, 'body.creds.signedPreKey.keyPair', problems);
    if (!Buffer.isBuffer(signedPreKey.signature)) problems.push('body.creds.signedPreKey.signature must be binary (BufferJSON)');
    if (!Number.isInteger(signedPreKey.keyId)) problems.push('body.creds.signedPreKey.keyId must be an integer');
  }
  if (!Number.isInteger(creds.registrationId)) problems.push('body.creds.registrationId must be an integer');
  if (typeof creds.advSecretKey !== 'string' || creds.advSecretKey === '') problems.push('body.creds.advSecretKey must be a string');
  if (!isObject(creds.account)) problems.push('body.creds.account is missing: the session was never paired with a phone');
  const me = creds.me;
  const jid = isObject(me) && typeof me.id === 'string' ? me.id : undefined;
  const phoneNumber = jid ? /^(\d{5,20})(?::\d+)?@s\.whatsapp\.net$/.exec(jid)?.[1] : undefined;
  if (!phoneNumber) problems.push('body.creds.me.id must be the account JID (`<number>:<device>@s.whatsapp.net`): the session was never paired with a phone');
  return phoneNumber;
}

function checkKeyPair(value: unknown, where: string, problems: string[]): void {
  const ok = isObject(value) && isKey(value.private) && isKey(value.public);
  if (!ok) problems.push(`${where} must be a key pair { private, public } of 32-byte binary values (BufferJSON)`);
}

const isKey = (value: unknown) => Buffer.isBuffer(value) && (value.length === 32 || value.length === 33);

/** Counters and settings a library of another version may not have written. */
function withDefaults(creds: Record<string, unknown>): Record<string, unknown> {
  return {
    processedHistoryMessages: [],
    nextPreKeyId: 1,
    firstUnuploadedPreKeyId: 1,
    accountSyncCounter: 0,
    accountSettings: { unarchiveChats: false },
    registered: false,
    signalIdentities: [],
    ...creds,
  };
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
