import { describe, expect, test } from 'bun:test';
import { signIn, useInstallation } from '../support/installation.ts';
import { ROOT, spawnServiceProcess, type ServerProcess } from '../support/server-process.ts';
import { waitFor } from '../support/wait.ts';

/**
 * The service's logs and health as an operator meets them, on a real process: every line of its
 * output is a JSON object (level, time, msg); each answer carries `X-Request-Id` (the caller's
 * when sane, else a new one) and has one access line with that id, the route template, status,
 * duration and, once authenticated, the workspace; no credential, password, query string or body
 * ever reaches the output. `LOG_LEVEL=warn` keeps the info lines out. `/readyz` is 200 while the
 * process serves, and 503 `draining` from SIGTERM until it stops (`DRAIN_SECONDS`).
 */
const installation = useInstallation('switchboard-logs-');
const quiet = useInstallation('switchboard-logs-quiet-');

const PASSWORD = 'correct horse battery staple';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type LogLine = { level: string; time: string; msg: string; [field: string]: unknown };

/** Every line of the output, each parsed as JSON (a line that is not JSON fails the test here). */
function parsedLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      let parsed: LogLine;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
      expect(typeof parsed.level).toBe('string');
      expect(new Date(parsed.time).toISOString()).toBe(parsed.time);
      expect(typeof parsed.msg).toBe('string');
      return parsed;
    });
}

async function stopped(server: ServerProcess): Promise<string> {
  await server.stop();
  return server.log();
}

describe('logs of a running service', () => {
  test('JSON lines; request ids taken or made and returned on every answer; one access line each; no secret, query or body', async () => {
    const bootstrap = installation.cli(['bootstrap', '--email', 'ops@example.com', '--workspace', 'Ops', '--plan', 'PRO', '--password', PASSWORD]);
    expect(bootstrap.code).toBe(0);
    const owner = JSON.parse(bootstrap.stdout.trim()) as { workspaceId: string; token: string };

    const server = await installation.startServer();
    let output: string;
    const ids: Record<string, string | null> = {};
    try {
      // Generated when absent, on a public route.
      const health = await fetch(`${server.url}/healthz`);
      ids.health = health.headers.get('x-request-id');
      expect(ids.health).toMatch(UUID);

      // The caller's own id, on an authenticated call.
      const accounts = await fetch(`${server.url}/v3/accounts`, { headers: { apikey: owner.token, 'x-request-id': 'trace-42.a:b' } });
      expect(accounts.status).toBe(200);
      expect(accounts.headers.get('x-request-id')).toBe('trace-42.a:b');

      // Not sane (spaces, too long): replaced, never echoed.
      for (const offered of ['two words', 'x'.repeat(129), 'quote"d']) {
        const res = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': offered } });
        expect(res.headers.get('x-request-id')).toMatch(UUID);
      }

      // A token in the query string (refused) and a failing call with a body: ids on errors too.
      const queried = await fetch(`${server.url}/v3/accounts?access_token=QUERY-SECRET-123`, { headers: { 'x-request-id': 'trace-query' } });
      expect(queried.status).toBe(401);
      expect(queried.headers.get('x-request-id')).toBe('trace-query');
      const broken = await fetch(`${server.url}/v3/api-tokens`, {
        method: 'POST',
        headers: { apikey: owner.token, 'content-type': 'application/json', 'x-request-id': 'trace-broken' },
        body: '{"name": "BODY-SECRET-456",',
      });
      expect(broken.status).toBe(400);
      expect(broken.headers.get('x-request-id')).toBe('trace-broken');
      const created = await fetch(`${server.url}/v3/api-tokens`, {
        method: 'POST',
        headers: { apikey: owner.token, 'content-type': 'application/json', 'x-request-id': 'trace-created' },
        body: JSON.stringify({ name: 'BODY-SECRET-789' }),
      });
      expect(created.status).toBe(201);
      const newToken = ((await created.json()) as { token: string }).token;
      const missing = await fetch(`${server.url}/v3/no-such-route/0190a0a0-0000-7000-8000-000000000000`, { headers: { 'x-request-id': 'trace-404' } });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('x-request-id')).toBe('trace-404');

      // A password in a form body (the sign-in page) and a session cookie.
      expect(await signIn(server.url, 'ops@example.com', PASSWORD)).toBe(303);

      // Ready while serving, with each check named.
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get('x-request-id')).toMatch(UUID);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', worker: 'ok' } });
      output = await stopped(server);

      const lines = parsedLines(output);
      const access = (requestId: string) => lines.find((line) => line.msg === 'request' && line.requestId === requestId);
      expect(access('trace-42.a:b')).toMatchObject({ level: 'info', method: 'GET', route: '/v3/accounts', status: 200, workspaceId: owner.workspaceId });
      expect(typeof access('trace-42.a:b')!.durationMs).toBe('number');
      expect(access(ids.health!)).toMatchObject({ method: 'GET', route: '/healthz', status: 200 });
      expect(access(ids.health!)!.workspaceId).toBeUndefined();
      expect(access('trace-query')).toMatchObject({ route: '/v3/accounts', status: 401 });
      expect(access('trace-broken')).toMatchObject({ method: 'POST', route: '/v3/api-tokens', status: 400 });
      expect(access('trace-created')).toMatchObject({ method: 'POST', route: '/v3/api-tokens', status: 201, workspaceId: owner.workspaceId });
      // An unmatched path has no route template, and its raw path is not logged.
      expect(access('trace-404')).toMatchObject({ method: 'GET', status: 404 });
      expect(access('trace-404')!.route).toBeUndefined();
      expect(output).not.toContain('no-such-route');
      // The start-up lines are log lines too, and the stop is logged.
      expect(lines.find((line) => line.msg.startsWith('Switchboard listening on'))).toMatchObject({ level: 'info', url: server.url, worker: true });
      expect(lines.map((line) => line.msg)).toContain('stopped');

      for (const secret of [owner.token, newToken, PASSWORD, 'QUERY-SECRET-123', 'access_token', 'BODY-SECRET', 'sb_session', 'csrf']) {
        expect(output).not.toContain(secret);
      }
    } finally {
      await server.stop();
    }
  }, 180_000);

  test('LOG_LEVEL=warn keeps info lines (start-up, access) out; warnings still come as JSON', async () => {
    // On a database nobody uses yet, the set-up link is a warning: it still shows, and tells where the server is.
    const { process: child, match, log } = await spawnServiceProcess(['apps/server/main.ts'], { ...quiet.env(), LOG_LEVEL: 'warn' }, /(http:\/\/[^/\s]+)\/setup\?token=/);
    try {
      const url = match[1]!;
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      expect(health.headers.get('x-request-id')).toMatch(UUID);
      expect((await fetch(`${url}/v3/accounts`)).status).toBe(401);
    } finally {
      child.kill('SIGTERM');
      await child.exited;
    }
    expect(child.exitCode).toBe(0);
    const lines = parsedLines(log());
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(['warn', 'error', 'fatal']).toContain(line.level);
    expect(lines.some((line) => line.msg === 'request' || line.msg.startsWith('Switchboard listening'))).toBe(false);
  }, 120_000);

  test('an unknown LOG_LEVEL stops the start with one line and exit code 1', async () => {
    const child = Bun.spawn([process.execPath, 'apps/server/main.ts'], { cwd: ROOT, env: { ...quiet.env(), LOG_LEVEL: 'loud' }, stdout: 'pipe', stderr: 'pipe' });
    expect(await child.exited).toBe(1);
    expect((await new Response(child.stderr).text()).trim()).toBe('Switchboard could not start: LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"');
  });
});

describe('readiness while draining', () => {
  test('from SIGTERM, /readyz answers 503 draining while /healthz and the API still answer; then the process stops cleanly', async () => {
    const server = await installation.startServer({ DRAIN_SECONDS: '10' });
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      process.kill(server.pid, 'SIGTERM');
      const draining = await waitFor(
        async () => {
          const res = await fetch(`${server.url}/readyz`);
          return res.status === 503 ? ((await res.json()) as { status: string; checks: Record<string, string> }) : undefined;
        },
        { what: '/readyz answering 503' },
      );
      expect(draining.status).toBe('draining');
      expect(draining.checks.database).toBe('ok');
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      await waitFor(() => (server.log().includes('"msg":"stopped"') ? true : undefined), { what: 'the stop', timeout: 20_000 });
      const lines = parsedLines(server.log());
      expect(lines.find((line) => line.msg === 'stopping')).toMatchObject({ signal: 'SIGTERM', drainSeconds: 10 });
    } finally {
      await server.stop();
    }
  }, 120_000);
});
