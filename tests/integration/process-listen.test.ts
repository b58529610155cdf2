import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startServer, type ServerProcess } from '../support/server-process.ts';

/**
 * Issue 19, section 5: "Two instances can listen on one port today … requests were split between
 * two unrelated databases without a word. The server refuses a port in use and exits non-zero with
 * a clear message. `HOST` (default `0.0.0.0`) is configurable and the start-up line prints the
 * address actually bound." Each process has an embedded database of its own (unrelated databases).
 */
const dirs: string[] = [];
const running: ServerProcess[] = [];

function envWith(extra: Record<string, string>): Record<string, string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-listen-'));
  dirs.push(dataDir);
  const { HOST: _inherited, ...inherited } = process.env as Record<string, string>;
  return { ...inherited, DATA_DIR: dataDir, DATABASE_URL: '', PORT: '0', ...extra };
}

async function start(extra: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer(envWith(extra));
  running.push(server);
  return server;
}

afterAll(async () => {
  for (const server of running) await server.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('issue 19 §5: the server refuses a port in use', () => {
  test('a second process on the same port exits non-zero saying the port is in use; the first still answers', async () => {
    const first = await start({});
    const port = new URL(first.url).port;

    const second = Bun.spawn([process.execPath, 'apps/server/main.ts'], { cwd: ROOT, env: envWith({ PORT: port }), stdout: 'pipe', stderr: 'pipe' });
    const code = await second.exited;
    const stdout = await new Response(second.stdout).text();
    const stderr = await new Response(second.stderr).text();
    expect(code).not.toBe(0);
    expect(stderr).toContain(`Switchboard could not start: port ${port} is in use`);
    expect(stdout).not.toContain('listening on');

    // Every request reaches the first process (today half of them went to the second one's database).
    for (let i = 0; i < 10; i++) {
      const health = await fetch(`${first.url}/healthz`);
      expect(health.status).toBe(200);
    }
    expect(first.log()).not.toContain('could not start');
  }, 120_000);
});

describe('issue 19 §5: HOST is configurable and the start-up line prints the address bound', () => {
  test('without HOST the server binds 0.0.0.0 and says so', async () => {
    const server = await start({});
    const port = new URL(server.url).port;
    expect(server.log()).toContain(`bound to 0.0.0.0:${port}`);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, 120_000);

  test('HOST=127.0.0.1 binds loopback only and the line says so', async () => {
    const server = await start({ HOST: '127.0.0.1' });
    const port = new URL(server.url).port;
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    expect(server.log()).toContain(`listening on http://127.0.0.1:${port} (bound to 127.0.0.1:${port}`);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, 120_000);

  test('a HOST that is not an address of this machine is refused with a clear message', async () => {
    const child = Bun.spawn([process.execPath, 'apps/server/main.ts'], { cwd: ROOT, env: envWith({ HOST: '192.0.2.1' }), stdout: 'pipe', stderr: 'pipe' });
    expect(await child.exited).not.toBe(0);
    expect(await new Response(child.stderr).text()).toContain('Switchboard could not start: cannot listen on HOST 192.0.2.1');
  }, 120_000);
});

describe('a bad setting stops the start with one clear line', () => {
  test('OUTBOUND_ALLOW with a bad entry: exit 1, the message names it, no stack trace or source excerpt', async () => {
    const child = Bun.spawn([process.execPath, 'apps/server/main.ts'], { cwd: ROOT, env: envWith({ OUTBOUND_ALLOW: '127.0.0.0/8,bogus/99' }), stdout: 'pipe', stderr: 'pipe' });
    const code = await child.exited;
    const stderr = await new Response(child.stderr).text();
    expect(code).toBe(1);
    expect(stderr.trim()).toBe('Switchboard could not start: OUTBOUND_ALLOW must list hostnames, IP addresses or CIDRs separated by commas: "bogus/99" is not a hostname, an IP address or a CIDR');
  }, 60_000);
});
