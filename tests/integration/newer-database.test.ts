import { describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { openDatabase } from '../../adapters/postgres/database.ts';
import { useInstallation } from '../support/installation.ts';
import { ROOT } from '../support/server-process.ts';
import { onPostgres } from '../support/service.ts';

/**
 * `bun run start` refuses a database migrated by a newer version: one that holds a migration of
 * a module this version knows (the base, an available plugin) but has no file for. The process
 * writes one line and exits 1 before it applies or serves anything. A module this version does
 * not know at all (a plugin taken out of the catalogue) is no reason to refuse.
 */
const installation = useInstallation('switchboard-newer-db-');

const FUTURE = '9999_from_a_newer_version';

/** Opens the installation's database (the service stopped) and runs `change` on it. */
async function withDatabase(change: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<unknown>): Promise<void> {
  const env = installation.env();
  const database = await openDatabase({ url: env.DATABASE_URL || undefined, dataDir: env.DATA_DIR! });
  try {
    await change(database.db);
  } finally {
    await database.close();
  }
}

async function run(entry: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, entry], { cwd: ROOT, env: installation.env(), stdout: 'pipe', stderr: 'pipe' });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

describe('a database migrated by a newer version', () => {
  test('is refused with one line and exit code 1; once it is not newer, the service starts again', async () => {
    // A first start migrates the database.
    const first = await installation.startServer();
    await first.stop();

    await withDatabase((db) => sql`insert into schema_migrations (module, name) values ('base', ${FUTURE})`.execute(db));
    const refused = await run('apps/server/main.ts');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `Switchboard could not start: the database was migrated by a newer version of Switchboard (base/${FUTURE} unknown to this version); run that version or a newer one\n`,
    );
    if (onPostgres) {
      // A separate worker refuses the same way.
      const worker = await run('apps/worker/main.ts');
      expect(worker.code).toBe(1);
      expect(worker.stderr).toContain(`base/${FUTURE} unknown to this version`);
    }

    // A migration of a module this version does not know at all is not a newer version of it.
    await withDatabase(async (db) => {
      await sql`delete from schema_migrations where name = ${FUTURE}`.execute(db);
      await sql`insert into schema_migrations (module, name) values ('retired-plugin', '0001_tables')`.execute(db);
    });
    const again = await installation.startServer();
    try {
      const ready = await fetch(`${again.url}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', worker: 'ok' } });
    } finally {
      await again.stop();
    }
  }, 240_000);
});
