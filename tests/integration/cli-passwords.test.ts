import { describe, expect, test } from 'bun:test';
import { bootstrapOutput, signIn, useInstallation } from '../support/installation.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Passwords from the command line: `bootstrap --password-stdin` (or `--password P` for scripts)
 * gives the first Owner a password, keeping bootstrap's one-line JSON output; `set-password
 * --email E` sets an existing person's password from standard input. Checked the way a person
 * would: by signing in on the running service's sign-in page afterwards.
 */
const { cli, startServer } = useInstallation('switchboard-cli-passwords-');

describe('passwords from the CLI', () => {
  let first: { userId: string; workspaceId: string; token: string };

  test('bootstrap --password-stdin still prints exactly one JSON line', () => {
    const result = cli(['bootstrap', '--email', 'owner@example.com', '--workspace', 'Acme', '--password-stdin'], 'first owner password\n');
    expect(result.stderr).toBe('');
    first = bootstrapOutput(result);
  });

  test('a password that breaks the policy is refused before anything is created; both flags at once are a usage error', () => {
    const short = cli(['bootstrap', '--email', 'short@example.com', '--workspace', 'S', '--password-stdin'], 'too short\n');
    expect(short.code).toBe(1);
    expect(short.stdout).toBe('');
    expect(short.stderr).toContain('password must be at least 10 characters long');
    const both = cli(['bootstrap', '--email', 'both@example.com', '--workspace', 'B', '--password', 'long enough password', '--password-stdin'], 'long enough password\n');
    expect(both.code).toBe(2);
    expect(both.stdout).toBe('');
    expect(both.stderr).toContain('Usage');
  });

  test('bootstrap --password P (for scripts) works too', () => {
    const result = cli(['bootstrap', '--email', 'scripted@example.com', '--workspace', 'Scripts', '--password', 'scripted password']);
    expect(result.code).toBe(0);
    expect(Object.keys(JSON.parse(result.stdout.trim())).sort()).toEqual(['token', 'userId', 'workspaceId']);
  });

  let nobodysPassword: { userId: string };
  test('bootstrap without a password flag sets none', () => {
    const result = cli(['bootstrap', '--email', 'nopassword@example.com', '--workspace', 'None']);
    expect(result.code).toBe(0);
    nobodysPassword = JSON.parse(result.stdout.trim());
  });

  test('set-password --email E sets an existing person’s password from stdin, or replaces it', () => {
    const result = cli(['set-password', '--email', 'NoPassword@example.com'], 'a password at last\n');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout.trim())).toEqual({ userId: nobodysPassword.userId });
    const replaced = cli(['set-password', '--email', 'scripted@example.com'], 'a replaced password\n');
    expect(replaced.code).toBe(0);

    const unknown = cli(['set-password', '--email', 'nobody@example.com'], 'whatever password\n');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no person with email nobody@example.com');
    const short = cli(['set-password', '--email', 'owner@example.com'], 'short\n');
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('at least 10 characters');
    const noEmail = cli(['set-password'], 'whatever password\n');
    expect(noEmail.code).toBe(2);
    expect(noEmail.stderr).toContain('set-password --email E');
  });

  test('the service then signs each person in with the password set for them, and nobody with another', async () => {
    const server = await startServer();
    try {
      expect(await signIn(server.url, 'owner@example.com', 'first owner password')).toBe(303);
      expect(await signIn(server.url, 'owner@example.com', 'first owner password\n')).toBe(401); // the newline was not part of it
      expect(await signIn(server.url, 'owner@example.com', 'a replaced password')).toBe(401);
      expect(await signIn(server.url, 'nopassword@example.com', 'a password at last')).toBe(303);
      expect(await signIn(server.url, 'scripted@example.com', 'scripted password')).toBe(401); // replaced
      expect(await signIn(server.url, 'scripted@example.com', 'a replaced password')).toBe(303);
      expect(await signIn(server.url, 'short@example.com', 'too short')).toBe(401);
    } finally {
      await server.stop();
    }
  });
});

describe('verify-client (platform operator)', () => {
  test('gives an OAuth app the verified badge, and takes it away; an unknown id is an error', async () => {
    // Spec 5.3: "Applications verified by the platform show a verified badge ... verification is granted only by the platform".
    const owner = JSON.parse(cli(['bootstrap', '--email', 'apps@example.com', '--workspace', 'Apps']).stdout.trim());
    let server = await startServer();
    let clientId: string;
    try {
      const created = await fetch(`${server.url}/v3/oauth/clients`, {
        method: 'POST',
        headers: { apikey: owner.token, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Partner app', redirect_uris: ['https://partner.example/cb'] }),
      });
      expect(created.status).toBe(201);
      clientId = (await created.json()).client_id;
    } finally {
      await server.stop();
    }

    const verified = cli(['verify-client', '--client-id', clientId]);
    expect(verified.stderr).toBe('');
    expect(JSON.parse(verified.stdout.trim())).toEqual({ clientId, verified: true });
    server = await startServer();
    try {
      const read = await fetch(`${server.url}/v3/oauth/clients/${clientId}`, { headers: { apikey: owner.token } });
      expect((await read.json()).verified).toBe(true);
    } finally {
      await server.stop();
    }
    expect(JSON.parse(cli(['verify-client', '--client-id', clientId, '--revoke']).stdout.trim())).toEqual({ clientId, verified: false });
    const unknown = cli(['verify-client', '--client-id', 'no-such-client']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not found');
    expect(cli(['verify-client']).code).toBe(2);
  }, HOOK_TIMEOUT);
});
