import { pgDump } from '@electric-sql/pglite-tools/pg_dump';
import { SQL } from 'bun';
import { openDatabase } from '../../adapters/postgres/database.ts';
import { holdDataDir } from '../data-dir-lock.ts';
import { ArchiveError, readArchive, writeArchive } from './archive-file.ts';
import { holdsDatabase } from './embedded-backup.ts';

/**
 * `cli export` and `cli import`: the embedded database moved to Postgres. The export is
 * pg_dump's plain SQL of the whole database (PGlite's WebAssembly build of pg_dump), every
 * schema: Switchboard's tables, the plugins', and pg-boss's with its queued jobs. The import
 * runs it on an empty Postgres database in one transaction.
 */
export interface ExportResult {
  file: string;
  bytes: number;
  createdAt: string;
  migrations: number;
}

export interface ImportResult {
  createdAt: string;
  migrations: number;
  tables: number;
}

/**
 * Settings pg_dump writes that older servers do not know: `transaction_timeout` exists from
 * Postgres 17 on, and a dump of PGlite (Postgres 18) sets it to its default. Leaving it out
 * changes nothing and lets the SQL run on Postgres 14 to 16.
 */
const NEWER_SERVER_SETTINGS = /^SET transaction_timeout = 0;\n/m;

/** The export of the embedded database in DATA_DIR, with the service stopped. */
export async function exportTo(dataDir: string, file: string, force: boolean): Promise<ExportResult> {
  if (!holdsDatabase(dataDir)) throw new ArchiveError(`${dataDir} holds no embedded database: nothing to export`);
  const lock = holdDataDir(dataDir);
  try {
    const database = await openDatabase({ dataDir });
    try {
      const rows = await database.db.selectFrom('schema_migrations').select(['module', 'name']).execute();
      // No owner and no grants: the tables belong to whoever imports them on the server.
      const dump = await pgDump({ pg: database.pglite!, args: ['--no-owner', '--no-privileges'] });
      const text = (await dump.text()).replace(NEWER_SERVER_SETTINGS, '');
      const manifest = writeArchive(file, 'export', rows.map((row) => `${row.module}/${row.name}`), new TextEncoder().encode(text), force);
      return { file, bytes: manifest.bytes, createdAt: manifest.createdAt, migrations: rows.length };
    } finally {
      await database.close();
    }
  } finally {
    lock.release();
  }
}

/**
 * Runs FILE (an export) on the Postgres database at `url`, which must be empty: it is all or
 * nothing, one transaction. Then checks the database has the migrations the export had.
 */
export async function importInto(url: string, file: string): Promise<ImportResult> {
  const { manifest, payload } = readArchive(file, 'export');
  const target = await openDatabase({ url, dataDir: '' });
  try {
    const existing = await target.db.introspection.getTables();
    if (existing.length > 0) {
      const names = existing.slice(0, 5).map((t) => `${t.schema}.${t.name}`).join(', ');
      throw new ArchiveError(`the database at DATABASE_URL is not empty (it has ${existing.length} tables: ${names}${existing.length > 5 ? ', …' : ''}); import into a new, empty database`);
    }
    // A connection of its own: the dump's statements go through the simple protocol (many in one
    // message), and it clears search_path for its session, which no other query should inherit.
    const session = new SQL({ url, max: 1 });
    try {
      await session.begin(async (tx) => {
        await tx.unsafe(new TextDecoder().decode(payload)).simple();
      });
    } finally {
      await session.close();
    }
    const rows = await target.db.selectFrom('schema_migrations').select(['module', 'name']).execute();
    const imported = rows.map((row) => `${row.module}/${row.name}`).sort();
    if (imported.join('\n') !== manifest.migrations.join('\n')) throw new ArchiveError(`${file} did not import as the database its header describes`);
    const tables = await target.db.introspection.getTables();
    return { createdAt: manifest.createdAt, migrations: imported.length, tables: tables.length };
  } finally {
    await target.close();
  }
}
