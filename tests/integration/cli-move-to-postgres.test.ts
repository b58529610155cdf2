import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQL } from 'bun';
import { bootstrapOutput, signIn } from '../support/installation.ts';
import { callProcess, ROOT, startServer, type ServerProcess } from '../support/server-process.ts';
import { freshDatabase, HOOK_TIMEOUT, onPostgres } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';

/**
 * docs/operations.md, "Moving to Postgres", as a user follows it: data made through the service
 * on the embedded database (an Owner with a password, a connection with a message sent, a
 * webhook, a second token), the service stopped, `cli export`, `cli import` into a new Postgres
 * database, and the service started on Postgres answering the same tokens with the same data.
 * It needs a Postgres server: it runs in the suite's Postgres pass (TEST_DATABASE_URL set).
 */
if (!onPostgres) console.log('cli-move-to-postgres: skipped, it needs a Postgres server to move to; it runs when TEST_DATABASE_URL is set (the suite\'s Postgres pass)');

describe.skipIf(!onPostgres)('moving the embedded database to Postgres', () => {
  let base = '';
  let embedded: Record<string, string> = {};
  let target: { url: string; drop(): Promise<void> } | undefined;
  let onTarget: Record<string, string> = {};
  let server: ServerProcess | undefined;
  let owner: { userId: string; workspaceId: string; token: string };
  let secondToken = '';
  let connectionId = '';
  let message: { id: string; status: string };
  let webhookId = '';
  let exportedJobs = 0;
  const exportFile = () => join(base, 'switchboard-export.sql');

  const cli = (args: string[], env: Record<string, string>, stdin?: string) => {
    const result = Bun.spawnSync([process.execPath, 'apps/cli/main.ts', ...args], { cwd: ROOT, env, stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin) });
    return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
  };
  const call = (apikey: string, method: string, path: string, body?: unknown) => callProcess(server!, apikey, method, path, body);

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'switchboard-move-'));
    const common = { ...(process.env as Record<string, string>), PORT: '0', OUTBOUND_ALLOW: '127.0.0.0/8' };
    embedded = { ...common, DATA_DIR: join(base, 'data'), DATABASE_URL: '' };
    target = await freshDatabase(process.env.TEST_DATABASE_URL!);
    onTarget = { ...common, DATA_DIR: join(base, 'unused'), DATABASE_URL: target.url };
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    await server?.stop();
    await target?.drop();
    rmSync(base, { recursive: true, force: true });
  }, HOOK_TIMEOUT);

  test('data made through the service on the embedded database; export refuses while it runs', async () => {
    owner = bootstrapOutput(cli(['bootstrap', '--email', 'owner@example.com', '--workspace', 'Moving', '--plan', 'PRO', '--password-stdin'], embedded, 'owner password to keep\n'));
    server = await startServer(embedded);
    const token = await call(owner.token, 'POST', '/v3/api-tokens', { name: 'second' });
    expect(token.status).toBe(201);
    secondToken = token.body.token;
    const connection = await call(owner.token, 'POST', '/v3/connections', { name: 'line' });
    expect(connection.status).toBe(201);
    connectionId = connection.body.id;
    expect((await call(owner.token, 'POST', `/v3/connections/${connectionId}/connect`)).body.status).toBe('CONNECTED');
    const sent = await call(owner.token, 'POST', `/v3/connections/${connectionId}/chats/messages`, { to: '+33612345678', text: 'Sent before the move' });
    expect(sent.status).toBe(201);
    message = await waitFor(async () => {
      const m = (await call(owner.token, 'GET', `/v3/connections/${connectionId}/chats/messages/${sent.body.id}`)).body;
      return m?.status && m.status !== 'PENDING' ? m : undefined;
    }, { what: 'the message to be sent' });
    const hook = await call(owner.token, 'POST', '/v3/webhooks', { url: 'http://127.0.0.1:9/moved', events: ['messages.upsert'] });
    expect(hook.status).toBe(201);
    webhookId = hook.body.id;

    const refused = cli(['export', '--to', exportFile()], embedded);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('export failed: the service is running');
    await server.stop();
    server = undefined;
  }, 180_000);

  test('export: one JSON line, the whole database as SQL (pg-boss included), mode 0600', () => {
    const result = cli(['export', '--to', exportFile()], embedded);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout.trim());
    expect(printed).toMatchObject({ file: exportFile(), bytes: expect.any(Number), createdAt: expect.any(String) });
    expect(statSync(exportFile()).mode & 0o777).toBe(0o600);
    const text = readFileSync(exportFile(), 'utf8');
    expect(text).toStartWith('-- SWITCHBOARD-EXPORT 1 {');
    expect(text).toContain('CREATE SCHEMA pgboss;');
    // pg-boss's jobs: rows of the partitions of pgboss.job (job_common, and a queue's own when it has one).
    exportedJobs = text.split('\n').filter((line) => /^INSERT INTO pgboss\.job(?!_dependency)\w* VALUES /.test(line)).length;
    expect(exportedJobs).toBeGreaterThan(0);
  }, HOOK_TIMEOUT);

  test('import into the new Postgres database, all of it; a second import is refused (the database is no longer empty)', async () => {
    const result = cli(['import', '--from', exportFile()], onTarget);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout.trim());
    expect(printed.migrations).toBeGreaterThan(20);
    expect(printed.tables).toBeGreaterThan(20);

    const sql = new SQL({ url: target!.url, max: 1 });
    try {
      const [{ count }] = await sql`select count(*)::int as count from pgboss.job`;
      expect(count).toBe(exportedJobs);
    } finally {
      await sql.close();
    }

    const again = cli(['import', '--from', exportFile()], onTarget);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('import failed: the database at DATABASE_URL is not empty');
  }, HOOK_TIMEOUT);

  test('the service on Postgres answers the same tokens and password with the same data', async () => {
    server = await startServer(onTarget);
    expect(server.log()).toContain('on Postgres');
    const accounts = await call(owner.token, 'GET', '/v3/accounts');
    expect(accounts.status).toBe(200);
    expect(accounts.body.find((w: { id: string }) => w.id === owner.workspaceId)).toMatchObject({ name: 'Moving', plan: 'PRO' });
    expect((await call(secondToken, 'GET', '/v3/accounts')).status).toBe(200);

    const moved = await call(owner.token, 'GET', `/v3/connections/${connectionId}/chats/messages/${message.id}`);
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: message.id, status: message.status });
    expect(JSON.stringify(moved.body)).toContain('Sent before the move');

    const hooks = await call(owner.token, 'GET', '/v3/webhooks');
    expect((hooks.body.data ?? hooks.body).map((h: { id: string }) => h.id)).toEqual([webhookId]);
    expect(await signIn(server.url, 'owner@example.com', 'owner password to keep')).toBe(303);

    // The queue works on what came over: a new send goes out.
    const sent = await call(owner.token, 'POST', `/v3/connections/${connectionId}/chats/messages`, { to: '+33612345678', text: 'Sent after the move' });
    expect(sent.status).toBe(201);
    await waitFor(async () => {
      const m = (await call(owner.token, 'GET', `/v3/connections/${connectionId}/chats/messages/${sent.body.id}`)).body;
      return m?.status && m.status !== 'PENDING' ? m : undefined;
    }, { what: 'a message sent after the move' });
  }, 180_000);
});
