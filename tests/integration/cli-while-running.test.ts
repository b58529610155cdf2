import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootstrapOutput, signIn, useInstallation } from '../support/installation.ts';
import { callProcess, type ServerProcess } from '../support/server-process.ts';
import { sendControlRequest } from '../../apps/control-socket.ts';
import { HOOK_TIMEOUT, onPostgres } from '../support/service.ts';

/**
 * `bun run cli …` while `bun run start` runs: on the embedded database the service holds DATA_DIR,
 * so the CLI hands its command to the service over the control socket `DATA_DIR/control.sock`;
 * on Postgres it connects directly. Either way it prints what it prints running alone: the same
 * JSON on stdout, the same exit codes, the same error texts on stderr.
 */
const installation = useInstallation('switchboard-cli-running-');
const { cli } = installation;
const socketPath = () => join(installation.dataDir(), 'control.sock');

type Run = ReturnType<typeof cli>;
/** The error cases, run the same way while the service runs and after it stopped. */
const errorCases = (): Record<string, Run> => ({
  unknownPerson: cli(['set-password', '--email', 'nobody@example.com'], 'whatever password\n'),
  shortPassword: cli(['set-password', '--email', 'owner@example.com'], 'short\n'),
  badEmail: cli(['bootstrap', '--email', 'not-an-email', '--workspace', 'W']),
  unknownClient: cli(['verify-client', '--client-id', 'no-such-client']),
  usage: cli(['bootstrap', '--email', 'x@example.com', '--workspace', 'W', '--plan', 'GOLD']),
});

/** Bytes written to the control socket as any local program could; answers what came back. */
async function rawRequest(path: string, bytes: string): Promise<string> {
  const { promise, resolve } = Promise.withResolvers<string>();
  let received = '';
  const socket = await Bun.connect({
    unix: path,
    socket: {
      data(_socket, chunk) {
        received += new TextDecoder().decode(chunk);
      },
      close() {
        resolve(received);
      },
      error() {
        resolve(received);
      },
    },
  });
  socket.write(bytes);
  socket.flush();
  return promise;
}

describe('the CLI while the service runs', () => {
  let server: ServerProcess;
  let owner: { userId: string; workspaceId: string; token: string };
  let whileRunning: Record<string, Run>;

  beforeAll(async () => {
    server = await installation.startServer();
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    await server?.stop();
  }, HOOK_TIMEOUT);

  test('bootstrap prints its one JSON line, and the token and password work on the running service at once', async () => {
    const result = cli(['bootstrap', '--email', 'Owner@Example.com', '--workspace', 'Live', '--plan', 'PRO', '--password-stdin'], 'owner password one\n');
    expect(result.stderr).toBe('');
    owner = bootstrapOutput(result);

    const accounts = await callProcess(server, owner.token, 'GET', '/v3/accounts');
    expect(accounts.status).toBe(200);
    expect(accounts.body.find((w: { id: string }) => w.id === owner.workspaceId)).toMatchObject({ name: 'Live', isPersonal: false, roles: ['OWNER'] });
    expect(await signIn(server.url, 'owner@example.com', 'owner password one')).toBe(303);
    if (!onPostgres) expect(server.log()).toContain('Control socket: bootstrap done');
  });

  test('set-password: the person signs in with the new password at once, and no longer with the old', async () => {
    const result = cli(['set-password', '--email', 'OWNER@example.com'], 'owner password two\n');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([JSON.stringify({ userId: owner.userId })]);
    expect(await signIn(server.url, 'owner@example.com', 'owner password two')).toBe(303);
    expect(await signIn(server.url, 'owner@example.com', 'owner password one')).toBe(401);
  });

  test('verify-client gives an OAuth app the badge the running service shows, and takes it away', async () => {
    const created = await callProcess(server, owner.token, 'POST', '/v3/oauth/clients', { client_name: 'Partner app', redirect_uris: ['https://partner.example/cb'] });
    expect(created.status).toBe(201);
    const clientId: string = created.body.client_id;

    const verified = cli(['verify-client', '--client-id', clientId]);
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toBe(`${JSON.stringify({ clientId, verified: true })}\n`);
    expect((await callProcess(server, owner.token, 'GET', `/v3/oauth/clients/${clientId}`)).body.verified).toBe(true);

    const revoked = cli(['verify-client', '--client-id', clientId, '--revoke']);
    expect(revoked.stdout).toBe(`${JSON.stringify({ clientId, verified: false })}\n`);
    expect((await callProcess(server, owner.token, 'GET', `/v3/oauth/clients/${clientId}`)).body.verified).toBe(false);
  });

  test('errors keep their exit codes and texts, and print nothing on stdout', () => {
    whileRunning = errorCases();
    const { unknownPerson, shortPassword, badEmail, unknownClient, usage } = whileRunning;
    for (const run of Object.values(whileRunning)) expect(run.stdout).toBe('');
    expect(unknownPerson!.code).toBe(1);
    expect(unknownPerson!.stderr).toBe('set-password failed: no person with email nobody@example.com\n');
    expect(shortPassword!.code).toBe(1);
    expect(shortPassword!.stderr).toContain('at least 10 characters');
    expect(badEmail!.code).toBe(1);
    expect(badEmail!.stderr).toBe('bootstrap failed: email must be a valid email address\n');
    expect(unknownClient!.code).toBe(1);
    expect(unknownClient!.stderr).toBe('verify-client failed: OAuth client no-such-client not found\n');
    expect(usage!.code).toBe(2);
    expect(usage!.stderr).toContain('Usage');
  });

  test.skipIf(onPostgres)('the control socket is the owner’s alone: mode 0600, in a DATA_DIR only the owner can enter', () => {
    const socket = statSync(socketPath());
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    expect(statSync(installation.dataDir()).mode & 0o077).toBe(0);
  });

  test.skipIf(onPostgres)('garbage on the control socket gets an error answer, and the service keeps running', async () => {
    const answers = [
      await rawRequest(socketPath(), 'garbage\n'),
      await rawRequest(socketPath(), '[1,2,3]\n'),
      await rawRequest(socketPath(), `${JSON.stringify({ command: 'drop-database' })}\n`),
      await rawRequest(socketPath(), `${JSON.stringify({ command: 'verify-client', clientId: 'x', verified: 'yes' })}\n`),
      await rawRequest(socketPath(), `${JSON.stringify({ command: 'set-password', email: 'owner@example.com', password: 'long enough password', role: 'ADMIN' })}\n`),
      await rawRequest(socketPath(), `${JSON.stringify({ command: 'bootstrap', email: 'y@example.com', workspace: 'x'.repeat(20_000), plan: 'PRO' })}\n`),
      await rawRequest(socketPath(), `${JSON.stringify({ command: 'backup', to: 'relative/file', force: 'no' })}\n`),
    ].map((text) => JSON.parse(text.trim()));
    expect(answers[0]).toEqual({ ok: false, error: 'request must be one line of JSON' });
    expect(answers[1]).toEqual({ ok: false, error: 'request must be a JSON object' });
    expect(answers[2]).toEqual({ ok: false, error: 'command must be one of bootstrap, set-password, verify-client, backup' });
    expect(answers[3]).toEqual({ ok: false, error: 'verified must be a boolean' });
    expect(answers[4]).toEqual({ ok: false, error: 'role is not a field of set-password' });
    expect(answers[5]).toEqual({ ok: false, error: 'request must be at most 16384 bytes' });
    expect(answers[6]).toEqual({ ok: false, error: 'to must be an absolute path; force must be a boolean' });

    // Nothing was changed by them: the password is still the one set above.
    expect(await signIn(server.url, 'owner@example.com', 'owner password two')).toBe(303);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    // One request per connection: what follows the first line is not run.
    const [first, ...rest] = (await rawRequest(socketPath(), `${JSON.stringify({ command: 'verify-client', clientId: 'no-such-client', verified: true })}\ngarbage\n`)).trim().split('\n');
    expect(JSON.parse(first!)).toEqual({ ok: false, error: 'OAuth client no-such-client not found' });
    expect(rest).toEqual([]);
    expect(cli(['verify-client', '--client-id', 'no-such-client']).stderr).toBe('verify-client failed: OAuth client no-such-client not found\n');
  });

  test.skipIf(!onPostgres)('on Postgres the CLI connects to the database itself: no control socket', () => {
    expect(existsSync(socketPath())).toBe(false);
  });

  test('after the service stops, the CLI runs alone again and answers exactly as it did through the service', async () => {
    await server.stop();
    expect(existsSync(socketPath())).toBe(false);
    const alone = errorCases();
    for (const [name, run] of Object.entries(alone)) expect({ name, ...run }).toEqual({ name, ...whileRunning[name]! });

    const again = bootstrapOutput(cli(['bootstrap', '--email', 'owner@example.com', '--workspace', 'Offline']));
    expect(again.userId).toBe(owner.userId);
    expect(again.workspaceId).not.toBe(owner.workspaceId);
  });
});

describe.skipIf(onPostgres)('leftovers in DATA_DIR', () => {
  test('a crashed service’s socket is no obstacle: the CLI runs alone, and the next start listens again', async () => {
    const crashed = await installation.startServer();
    await crashed.kill();
    expect(existsSync(socketPath())).toBe(true);
    bootstrapOutput(cli(['bootstrap', '--email', 'after-crash@example.com', '--workspace', 'Crash']));

    const restarted = await installation.startServer();
    try {
      const through = bootstrapOutput(cli(['bootstrap', '--email', 'after-crash@example.com', '--workspace', 'Restarted']));
      expect((await callProcess(restarted, through.token, 'GET', '/v3/accounts')).status).toBe(200);
      expect(restarted.log()).toContain('Control socket: bootstrap done');
    } finally {
      await restarted.stop();
    }
    expect(existsSync(socketPath())).toBe(false);
  }, HOOK_TIMEOUT);

  test('when the holder of DATA_DIR does not answer on a socket, the CLI says the database is in use', () => {
    // This test's own process stands in for a holder that is alive but listens on no socket.
    const pidFile = join(installation.dataDir(), 'switchboard.pid');
    writeFileSync(pidFile, String(process.pid));
    try {
      const noSocket = cli(['bootstrap', '--email', 'x@example.com', '--workspace', 'X']);
      expect(noSocket.code).toBe(1);
      expect(noSocket.stdout).toBe('');
      expect(noSocket.stderr).toContain('in use by another Switchboard process');

      writeFileSync(socketPath(), 'not a socket');
      const deadSocket = cli(['set-password', '--email', 'owner@example.com'], 'long enough password\n');
      expect(deadSocket.code).toBe(1);
      expect(deadSocket.stderr).toContain('in use by another Switchboard process');
    } finally {
      rmSync(pidFile, { force: true });
      rmSync(socketPath(), { force: true });
    }
  });

  test('a holder that takes the command but never answers: the CLI gives up with a clear error instead of hanging', async () => {
    const silent = Bun.listen({ unix: socketPath(), socket: { data() {} } });
    try {
      const started = Date.now();
      const answer = await sendControlRequest(installation.dataDir(), { command: 'verify-client', clientId: 'any', verified: true }, 300);
      expect(answer).toEqual({ ok: false, error: expect.stringContaining('did not answer within') });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      silent.stop(true);
      rmSync(socketPath(), { force: true });
    }
  });
});
