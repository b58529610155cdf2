import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { openDatabase } from '../../adapters/postgres/database.ts';
import { pgliteDialect } from '../../adapters/postgres/pglite-dialect.ts';
import type { Database } from '../../adapters/postgres/schema.ts';
import { packDataDir } from './data-dir-archive.ts';
import { holdDataDir } from '../data-dir-lock.ts';
import { CONTROL_SOCKET_FILE } from '../control-socket.ts';
import { ArchiveError, readArchive, writeArchive } from './archive-file.ts';

/**
 * `cli backup` and `cli restore` of the embedded database. A backup is the data directory (a
 * gzipped tarball, data-dir-archive.ts) behind a header (archive-file.ts). It is taken by the
 * process holding the database: the CLI itself when the service is stopped, the running
 * service when the CLI asks it over the control socket.
 */
export interface BackupResult {
  file: string;
  bytes: number;
  createdAt: string;
  migrations: number;
}

export interface RestoreResult {
  dataDir: string;
  createdAt: string;
  migrations: number;
  /** Where the database that was in DATA_DIR was moved (`--force`), or null. */
  replaced: string | null;
}

/** The files of DATA_DIR that are the holder's, not the database's: never carried into a restore. */
const HOLDER_FILES = ['switchboard.pid', CONTROL_SOCKET_FILE];

export function holdsDatabase(dataDir: string): boolean {
  return existsSync(join(dataDir, 'PG_VERSION'));
}

/**
 * The data directory as it stands between two transactions, with the migrations it has. PGlite
 * runs one statement at a time and a transaction holds it until it ends; the copy is made inside
 * a transaction of its own that writes nothing, so no other transaction is half done in it, and
 * nothing writes while it is made. The checkpoint first writes every committed change to the
 * data files (PGlite writes through to them), so the copy needs no recovery when it is opened.
 */
export async function snapshotDatabase(pglite: PGlite): Promise<{ migrations: string[]; archive: Uint8Array }> {
  const dataDir = pglite.dataDir;
  if (!dataDir || dataDir.includes('://')) throw new ArchiveError('this database is in memory: nothing on disk to back up');
  const builder = new Kysely<Database>({ dialect: pgliteDialect(pglite) });
  const query = builder.selectFrom('schema_migrations').select(['module', 'name']).compile();
  return pglite.transaction(async (tx) => {
    const rows = (await tx.query<{ module: string; name: string }>(query.sql, [...query.parameters])).rows;
    await tx.exec('CHECKPOINT');
    const archive = packDataDir(dataDir, new Set(HOLDER_FILES));
    return { migrations: rows.map((row) => `${row.module}/${row.name}`), archive };
  });
}

/** Writes the backup of this open database to FILE (run by whichever process holds it). */
export async function backupTo(pglite: PGlite, file: string, force: boolean): Promise<BackupResult> {
  const { migrations, archive } = await snapshotDatabase(pglite);
  const manifest = writeArchive(file, 'backup', migrations, archive, force);
  return { file, bytes: manifest.bytes, createdAt: manifest.createdAt, migrations: migrations.length };
}

/** The backup when no service runs: the CLI holds DATA_DIR for the time of the dump. */
export async function backupStopped(dataDir: string, file: string, force: boolean): Promise<BackupResult> {
  if (!holdsDatabase(dataDir)) throw new ArchiveError(`${dataDir} holds no embedded database: nothing to back up`);
  const lock = holdDataDir(dataDir);
  try {
    const database = await openDatabase({ dataDir });
    try {
      return await backupTo(database.pglite!, file, force);
    } finally {
      await database.close();
    }
  } finally {
    lock.release();
  }
}

/**
 * Restores FILE into DATA_DIR, with the service stopped (the caller's lock on DATA_DIR says so:
 * a running service keeps the database open and writes it as it goes). The backup is checked,
 * unpacked into a directory beside DATA_DIR and opened there; only then does it take DATA_DIR's
 * place. What DATA_DIR held is kept aside, renamed with the time (`--force`), or the restore is
 * refused.
 */
export async function restoreFrom(dataDir: string, file: string, force: boolean): Promise<RestoreResult> {
  const { manifest, payload } = readArchive(file, 'backup');
  const lock = holdDataDir(dataDir);
  let released = false;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const staging = join(dirname(dataDir), `${basename(dataDir)}.restoring-${stamp}`);
  try {
    const occupied = readdirSync(dataDir).some((name) => name !== 'switchboard.pid');
    if (occupied && !force) {
      throw new ArchiveError(`${dataDir} is not empty${holdsDatabase(dataDir) ? ' (it holds a database)' : ''}; give --force to replace it (what it holds is kept aside, renamed)`);
    }
    mkdirSync(staging, { mode: 0o700 });
    try {
      await new Bun.Archive(payload).extract(staging);
      for (const name of HOLDER_FILES) rmSync(join(staging, name), { force: true });
      const database = await openDatabase({ dataDir: staging });
      try {
        const rows = await database.db.selectFrom('schema_migrations').select(['module', 'name']).execute();
        const restored = rows.map((row) => `${row.module}/${row.name}`).sort();
        if (restored.join('\n') !== manifest.migrations.join('\n')) throw new ArchiveError(`${file} does not open as the database its header describes`);
      } finally {
        await database.close();
      }
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      if (error instanceof ArchiveError) throw error;
      throw new ArchiveError(`${file} could not be restored: ${error instanceof Error ? error.message : String(error)}`);
    }
    let replaced: string | null = null;
    try {
      if (occupied) {
        replaced = `${dataDir}.replaced-${stamp}`;
        renameSync(dataDir, replaced);
        rmSync(join(replaced, 'switchboard.pid'), { force: true });
      } else {
        rmSync(dataDir, { recursive: true, force: true });
      }
      released = true; // the pid file went with the directory it was in
      renameSync(staging, dataDir);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ArchiveError(`the restored database could not take the place of ${dataDir} (${reason}); it is in ${staging}${replaced ? `, and what ${dataDir} held is in ${replaced}` : ''}`);
    }
    return { dataDir, createdAt: manifest.createdAt, migrations: manifest.migrations.length, replaced };
  } finally {
    if (!released) lock.release();
  }
}
