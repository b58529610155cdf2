import { describe, expect, test } from 'bun:test';
import { bootstrapOutput, useInstallation } from '../support/installation.ts';

/**
 * The README's first-run path, as a user runs it: `bun run cli bootstrap` prints one JSON line
 * `{"userId","workspaceId","token"}` (ARCHITECTURE.md, contracts), `bun run start` serves on it,
 * the token creates a second token, and the second token lists the workspaces.
 */
const { cli, startServer } = useInstallation('switchboard-cli-');

describe('bun run cli bootstrap, then bun run start', () => {
  let first: { userId: string; workspaceId: string; token: string };

  test('bootstrap prints exactly one JSON line with userId, workspaceId and token', () => {
    const result = cli(['bootstrap', '--email', 'Founder@Example.com', '--workspace', 'Acme', '--plan', 'PRO']);
    first = bootstrapOutput(result);
  });

  test('bad arguments are refused with the usage text and no JSON', () => {
    const result = cli(['bootstrap', '--email', 'x@example.com', '--workspace', 'W', '--plan', 'GOLD']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage');
    const badEmail = cli(['bootstrap', '--email', 'not-an-email', '--workspace', 'W']);
    expect(badEmail.code).toBe(1);
    expect(badEmail.stderr).toContain('email');
  });

  test('the service starts on that database; the token creates a second token that lists workspaces', async () => {
    const server = await startServer();
    try {
      const health = await fetch(`${server.url}/healthz`);
      expect(await health.json()).toEqual({ status: 'ok' });

      const created = await fetch(`${server.url}/v3/api-tokens`, {
        method: 'POST',
        headers: { apikey: first.token, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'second' }),
      });
      expect(created.status).toBe(201);
      const second = (await created.json()) as { token: string };

      const accounts = await fetch(`${server.url}/v3/accounts`, { headers: { apikey: second.token } });
      expect(accounts.status).toBe(200);
      const list = (await accounts.json()) as Array<{ id: string; name: string; isPersonal: boolean; roles: string[] }>;
      expect(list.find((w) => w.id === first.workspaceId)).toMatchObject({ name: 'Acme', isPersonal: false, roles: ['OWNER'] });
      expect(list.some((w) => w.isPersonal)).toBe(true);

      // While the server runs, the CLI still works (on the embedded database, through the running
      // service's control socket: tests/integration/cli-while-running.test.ts), and its token at once.
      const meanwhile = bootstrapOutput(cli(['bootstrap', '--email', 'other@example.com', '--workspace', 'Other']));
      expect((await fetch(`${server.url}/v3/accounts`, { headers: { apikey: meanwhile.token } })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test('after the server stops, the CLI opens the data again and sees earlier work', () => {
    const again = cli(['bootstrap', '--email', 'founder@example.com', '--workspace', 'Second']);
    expect(again.code).toBe(0);
    const second = JSON.parse(again.stdout.trim());
    // Same person (emails are case-insensitive), new workspace.
    expect(second.userId).toBe(first.userId);
    expect(second.workspaceId).not.toBe(first.workspaceId);
  });
});
