import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../adapters/postgres/database.ts';
import { BASE_MIGRATIONS, migrate, type MigrationSet } from '../../adapters/postgres/migrator.ts';

/** True when the tests run against a real Postgres server (TEST_DATABASE_URL) as well. */
export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

export interface TestDatabase extends DatabaseHandle {
  /** Closes the connection and, on Postgres, drops the database this helper created. */
  close(): Promise<void>;
}

/**
 * A fresh database with the base migrations (plus `extra` sets) applied: the embedded PGlite
 * in memory, or, with `postgres: true` (default: when TEST_DATABASE_URL is set), a new
 * database of its own on that server, dropped on close.
 */
export async function openTestDatabase(options: { postgres?: boolean; migrations?: MigrationSet[] } = {}): Promise<TestDatabase> {
  const usePostgres = options.postgres ?? onPostgres;
  const fresh = usePostgres ? await freshDatabase(requiredUrl()) : undefined;
  const handle = await openDatabase({ url: fresh?.url, dataDir: 'memory://' });
  try {
    await migrate(handle.db, [BASE_MIGRATIONS, ...(options.migrations ?? [])]);
  } catch (error) {
    await handle.close();
    await fresh?.drop();
    throw error;
  }
  return {
    ...handle,
    async close() {
      await handle.close();
      await fresh?.drop();
    },
  };
}

function requiredUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  return url;
}

/** A new, empty database on the Postgres server at `adminUrl`; `drop()` removes it. */
export async function freshDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sb_test_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
