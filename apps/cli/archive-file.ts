import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { BASE_MIGRATIONS } from '../../adapters/postgres/migrator.ts';
import { AVAILABLE_PLUGINS } from '../../plugins/index.ts';

/**
 * The files `cli backup` and `cli export` write: one header line, then the payload. The header
 * says what the file is and carries a manifest (when it was made, the migrations the database
 * had, the payload's size and SHA-256), so `restore` and `import` can refuse a file that is not
 * theirs, is cut short or altered, or comes from a newer Switchboard than the one reading it.
 *
 * A backup's payload is the embedded database's data directory (a gzipped tarball); an export's
 * is SQL, and its header line is an SQL comment, so the file also runs as it is in `psql`.
 */
export type ArchiveKind = 'backup' | 'export';

const MAGIC: Record<ArchiveKind, string> = { backup: 'SWITCHBOARD-BACKUP 1', export: '-- SWITCHBOARD-EXPORT 1' };
const WHAT: Record<ArchiveKind, string> = { backup: 'a Switchboard backup', export: 'a Switchboard export' };
/** The header line is small; a file whose first line is longer is not ours. */
const MAX_HEADER_BYTES = 64 * 1024;

export interface ArchiveManifest {
  createdAt: string;
  /** `module/name` of every migration the database had applied, sorted. */
  migrations: string[];
  bytes: number;
  sha256: string;
}

export class ArchiveError extends Error {}

/**
 * Writes the file whole or not at all: into a temporary file beside it (mode 0600 from its
 * first byte: it holds hashed tokens, sealed credentials and, without SECRET_KEY, the keys
 * that open them), flushed, then renamed over FILE. An existing FILE is kept unless `force`.
 */
export function writeArchive(path: string, kind: ArchiveKind, migrations: string[], payload: Uint8Array, force: boolean): ArchiveManifest {
  if (!force && existsSync(path)) throw new ArchiveError(`${path} exists; give --force to replace it`);
  const manifest: ArchiveManifest = {
    createdAt: new Date().toISOString(),
    migrations: [...migrations].sort(),
    bytes: payload.byteLength,
    sha256: createHash('sha256').update(payload).digest('hex'),
  };
  const temporary = `${path}.${randomBytes(6).toString('hex')}.partial`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeAll(fd, Buffer.from(`${MAGIC[kind]} ${JSON.stringify(manifest)}\n`));
    writeAll(fd, payload);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return manifest;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let written = 0; written < bytes.byteLength; ) written += writeSync(fd, bytes, written);
}

/** FILE's manifest and payload, checked: the kind, the size and checksum, and migrations this version knows. */
export function readArchive(path: string, kind: ArchiveKind): { manifest: ArchiveManifest; payload: Uint8Array } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new ArchiveError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const newline = bytes.subarray(0, MAX_HEADER_BYTES).indexOf(0x0a);
  const header = newline < 0 ? '' : bytes.subarray(0, newline).toString('utf8');
  if (!header.startsWith(`${MAGIC[kind]} `)) throw new ArchiveError(`${path} is not ${WHAT[kind]}`);
  const manifest = parseManifest(header.slice(MAGIC[kind].length + 1));
  if (!manifest) throw new ArchiveError(`${path} is not ${WHAT[kind]}: its header does not parse`);
  const payload = bytes.subarray(newline + 1);
  if (payload.byteLength !== manifest.bytes || createHash('sha256').update(payload).digest('hex') !== manifest.sha256) {
    throw new ArchiveError(`${path} is damaged: its content does not match its header (cut short or altered)`);
  }
  const known = knownMigrations();
  const unknown = manifest.migrations.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new ArchiveError(`${path} comes from a newer Switchboard (its database has migrations this version does not know: ${unknown.join(', ')}); use that version or a later one`);
  }
  return { manifest, payload };
}

function parseManifest(text: string): ArchiveManifest | undefined {
  try {
    const value = JSON.parse(text) as ArchiveManifest;
    const valid =
      typeof value === 'object' && value !== null && typeof value.createdAt === 'string' && Number.isInteger(value.bytes) && typeof value.sha256 === 'string' &&
      Array.isArray(value.migrations) && value.migrations.every((name) => typeof name === 'string');
    return valid ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `module/name` of every migration this build ships: the base's and every plugin's. */
export function knownMigrations(): Set<string> {
  const sets = [BASE_MIGRATIONS, ...AVAILABLE_PLUGINS.filter((p) => p.migrations).map((p) => ({ module: p.name, migrations: p.migrations! }))];
  return new Set(sets.flatMap((set) => Object.keys(set.migrations).map((name) => `${set.module}/${name}`)));
}
