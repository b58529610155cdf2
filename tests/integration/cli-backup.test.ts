import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapOutput } from '../support/installation.ts';
import { callProcess, ROOT, startServer, type ServerProcess } from '../support/server-process.ts';
import { HOOK_TIMEOUT, onPostgres } from '../support/service.ts';
import { writeArchive } from '../../apps/cli/archive-file.ts';

/**
 * `bun run cli backup` and `restore` of the embedded database, as a user runs them: a backup taken
 * while the service runs and writes (the service takes it, asked over the control socket), then
 * restored over the database that went on changing, and the service started on what came back.
 * These commands are the embedded database's; on Postgres they refuse and name its own tools.
 */
let base = '';
let dataDir = '';
let env: Record<string, string> = {};
const backupFile = () => join(base, 'switchboard.backup');

function cli(args: string[], extra: Record<string, string> = {}) {
  const result = Bun.spawnSync([process.execPath, 'apps/cli/main.ts', ...args], { cwd: ROOT, env: { ...env, ...extra }, stdin: 'ignore' });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

/** The one JSON line a command printed, after checking it succeeded. */
function answer(result: ReturnType<typeof cli>): any {
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!);
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'switchboard-backup-'));
  dataDir = join(base, 'data');
  env = { ...(process.env as Record<string, string>), DATA_DIR: dataDir, PORT: '0', DATABASE_URL: '', OUTBOUND_ALLOW: '127.0.0.0/8' };
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

test('on Postgres, backup, restore and export refuse and say what to use instead', () => {
  for (const args of [['backup', '--to', backupFile()], ['restore', '--from', backupFile()], ['export', '--to', backupFile()]]) {
    const result = cli(args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`${args[0]} failed: ${args[0]} is for the embedded database`);
    expect(result.stderr).toContain('pg_dump');
  }
  expect(existsSync(backupFile())).toBe(false);
});

describe.skipIf(onPostgres)('backup and restore of the embedded database', () => {
  let server: ServerProcess | undefined;
  let token = '';
  const call = (method: string, path: string, body?: unknown) => callProcess(server!, token, method, path, body);

  afterAll(async () => {
    await server?.stop();
  }, HOOK_TIMEOUT);

  test('a backup taken while the service runs and writes: through the service, mode 0600, with its header; an existing file is kept unless --force', async () => {
    server = await startServer(env);
    token = bootstrapOutput(cli(['bootstrap', '--email', 'owner@example.com', '--workspace', 'Kept'])).token;
    expect((await call('POST', '/v3/webhooks', { url: 'http://127.0.0.1:9/before', events: ['messages.upsert'] })).status).toBe(201);

    // Writes go on while the backup is taken: each is wholly in the backup or wholly not.
    let writing = true;
    const writer = (async () => {
      let made = 0;
      while (writing) {
        expect((await call('POST', '/v3/api-tokens', { name: `during-${made}` })).status).toBe(201);
        made += 1;
      }
      return made;
    })();
    const backup = Bun.spawn([process.execPath, 'apps/cli/main.ts', 'backup', '--to', backupFile()], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' });
    const [code, stdout, stderr] = await Promise.all([backup.exited, new Response(backup.stdout).text(), new Response(backup.stderr).text()]);
    writing = false;
    expect(await writer).toBeGreaterThan(0);
    const printed = answer({ code, stdout, stderr });
    expect(printed).toMatchObject({ file: backupFile(), bytes: expect.any(Number), createdAt: expect.any(String) });
    expect(printed.migrations).toBeGreaterThan(20);
    expect(server.log()).toContain('Control socket: backup done');

    expect(statSync(backupFile()).mode & 0o777).toBe(0o600);
    const header = readFileSync(backupFile()).subarray(0, 200).toString('utf8');
    expect(header).toStartWith('SWITCHBOARD-BACKUP 1 {');

    const again = cli(['backup', '--to', backupFile()]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('exists; give --force to replace it');
    const forced = answer(cli(['backup', '--to', backupFile(), '--force']));
    expect(forced.file).toBe(backupFile());
  }, 180_000);

  test('restore refuses while the service runs, and says why', async () => {
    // A change after the backup: the restore takes it away.
    expect((await call('POST', '/v3/webhooks', { url: 'http://127.0.0.1:9/after', events: ['messages.upsert'] })).status).toBe(201);
    const result = cli(['restore', '--from', backupFile(), '--force']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('restore failed: the service is running');
    expect(result.stderr).toContain('stop it first');
    await server!.stop();
    server = undefined;
  }, HOOK_TIMEOUT);

  test('restore refuses a file that is not a backup, a damaged one and one of a newer version, and touches nothing', () => {
    const notOurs = join(base, 'not-a-backup');
    writeFileSync(notOurs, 'hello\n');
    const damaged = join(base, 'damaged.backup');
    const bytes = readFileSync(backupFile());
    bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0xff;
    writeFileSync(damaged, bytes);
    const newer = join(base, 'newer.backup');
    writeArchive(newer, 'backup', ['base/0001_identity', 'base/9999_from_the_future'], new Uint8Array([1, 2, 3]), false);
    const cases: [string, string][] = [
      [notOurs, 'is not a Switchboard backup'],
      [damaged, 'is damaged'],
      [newer, 'comes from a newer Switchboard'],
      [join(base, 'missing.backup'), 'cannot read'],
    ];
    for (const [file, message] of cases) {
      const result = cli(['restore', '--from', file, '--force']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(message);
    }
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
  });

  test('restore refuses a database already in DATA_DIR without --force; with it, keeps that one aside and the service starts on the backup', async () => {
    const refused = cli(['restore', '--from', backupFile()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('holds a database');
    expect(refused.stderr).toContain('--force');

    const restored = answer(cli(['restore', '--from', backupFile(), '--force']));
    expect(restored).toMatchObject({ dataDir, migrations: expect.any(Number) });
    expect(restored.replaced).toStartWith(`${dataDir}.replaced-`);
    expect(existsSync(join(restored.replaced, 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(dataDir, 'switchboard.pid'))).toBe(false);
    expect(existsSync(join(dataDir, 'control.sock'))).toBe(false);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);

    server = await startServer(env);
    const hooks = await call('GET', '/v3/webhooks');
    expect(hooks.status).toBe(200);
    const urls = (hooks.body.data ?? hooks.body).map((hook: { url: string }) => hook.url);
    expect(urls).toEqual(['http://127.0.0.1:9/before']);
    expect((await call('GET', '/v3/accounts')).body.map((w: { name: string }) => w.name)).toContain('Kept');
    await server.stop();
    server = undefined;
  }, 180_000);

  test('a backup taken with the service stopped restores into a new DATA_DIR', async () => {
    const stopped = join(base, 'stopped.backup');
    answer(cli(['backup', '--to', stopped]));
    const elsewhere = join(base, 'elsewhere');
    const restored = answer(cli(['restore', '--from', stopped], { DATA_DIR: elsewhere }));
    expect(restored).toMatchObject({ dataDir: elsewhere, replaced: null });
    server = await startServer({ ...env, DATA_DIR: elsewhere });
    expect((await call('GET', '/v3/accounts')).status).toBe(200);
  }, 180_000);
});
