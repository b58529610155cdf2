import { afterAll, beforeAll, expect } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startServer, type ServerProcess } from './server-process.ts';
import { freshDatabase, HOOK_TIMEOUT, onPostgres } from './service.ts';

/**
 * Switchboard installed as a user installs it, for a test file that runs its commands as
 * processes: a data directory of its own and, on Postgres, a fresh database, made before the
 * file's tests and removed after them. `cli` runs `apps/cli/main.ts` on it (with `stdin` typed
 * in, if given); `startServer` starts `apps/server/main.ts` on it, as often as a test restarts it.
 */
export interface Installation {
  cli(args: string[], stdin?: string): { code: number | null; stdout: string; stderr: string };
  /** `extra`: settings of this start only (`LOG_LEVEL`, `DRAIN_SECONDS`). */
  startServer(extra?: Record<string, string>): Promise<ServerProcess>;
  /** `cli bootstrap` of a PRO Owner, the README's first-run path; answers their token. */
  bootstrapOwner(email: string, workspace: string): string;
  /** The installation's DATA_DIR (known once the file's tests run). */
  dataDir(): string;
  /** The environment its processes run with (DATA_DIR, DATABASE_URL, PORT=0 …). */
  env(): Record<string, string>;
}

export function useInstallation(dataDirPrefix: string): Installation {
  let dataDir = '';
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let env: Record<string, string> = {};
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), dataDirPrefix));
    database = onPostgres ? await freshDatabase(process.env.TEST_DATABASE_URL!) : undefined;
    env = { ...(process.env as Record<string, string>), DATA_DIR: dataDir, PORT: '0', DATABASE_URL: database?.url ?? '', OUTBOUND_ALLOW: '127.0.0.0/8' };
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  }, HOOK_TIMEOUT);
  return {
    cli(args, stdin) {
      const result = Bun.spawnSync([process.execPath, 'apps/cli/main.ts', ...args], {
        cwd: ROOT,
        env,
        stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
      });
      return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
    },
    startServer: (extra = {}) => startServer({ ...env, ...extra }),
    dataDir: () => dataDir,
    env: () => env,
    bootstrapOwner(email, workspace) {
      const result = this.cli(['bootstrap', '--email', email, '--workspace', workspace, '--plan', 'PRO']);
      if (result.code !== 0) throw new Error(`bootstrap failed: ${result.stderr}`);
      return JSON.parse(result.stdout.trim()).token;
    },
  };
}

/** What `cli bootstrap` printed, checked: exactly one JSON line with userId, workspaceId and a live token. */
export function bootstrapOutput(result: { code: number | null; stdout: string }): { userId: string; workspaceId: string; token: string } {
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const printed = JSON.parse(lines[0]!);
  expect(Object.keys(printed).sort()).toEqual(['token', 'userId', 'workspaceId']);
  expect(printed.token).toStartWith('sk_live_');
  return printed;
}

/** Signs in through the service's sign-in form (its cookie and CSRF token); answers the POST's status (303 signed in, 401 not). */
export async function signIn(url: string, email: string, password: string): Promise<number> {
  const form = await fetch(`${url}/signin`);
  const cookie = form.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
  const csrf = (await form.text()).match(/name="csrf" value="([^"]+)"/)![1]!;
  const res = await fetch(`${url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ email, password, csrf }),
  });
  return res.status;
}
