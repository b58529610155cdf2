import { bootstrapOwner } from '../core/identity/bootstrap.ts';
import { passwordProblems, setPassword } from '../core/identity/passwords.ts';
import { normalizeEmail } from '../core/identity/workspaces.ts';
import { isPlanName, type PlanName } from '../core/plans/plans.ts';
import { badRequest, notFound } from '../core/shared/errors.ts';
import { setClientVerified } from '../core/oauth/clients.ts';
import { passwordHasher } from '../adapters/crypto/password-hasher.ts';
import { baseStores } from '../adapters/postgres/stores.ts';
import { announceAccessChange } from '../adapters/realtime/hub.ts';
import type { Runtime } from './runtime.ts';
import { backupTo, type BackupResult } from './cli/embedded-backup.ts';

/**
 * The CLI's administrative commands, once: `bun run cli` runs them on a runtime of its own, and
 * a service holding the embedded database runs them for the CLI when it asks over the control
 * socket (apps/control-socket.ts). Either way the same request gives the same result or error.
 */
export type AdminRequest =
  | { command: 'bootstrap'; email: string; workspace: string; plan: PlanName; password?: string }
  | { command: 'set-password'; email: string; password: string }
  | { command: 'verify-client'; clientId: string; verified: boolean }
  /** `to`: an absolute path, written by the process that holds the database. */
  | { command: 'backup'; to: string; force: boolean };

export type AdminResult = { userId: string; workspaceId: string; token: string } | { userId: string } | { clientId: string; verified: boolean } | BackupResult;

export const ADMIN_COMMANDS = ['bootstrap', 'set-password', 'verify-client', 'backup'] as const;

/** Longest email, workspace name or client id a request may carry (a bound, not a policy: core checks each). */
const MAX_FIELD_LENGTH = 320;
/** Longest path a backup may be written to (Linux's PATH_MAX). */
const MAX_PATH_LENGTH = 4096;

export async function runAdminCommand(runtime: Runtime, request: AdminRequest): Promise<AdminResult> {
  const { ctx } = runtime;
  if (request.command === 'bootstrap') {
    const { password } = request;
    if (password !== undefined) assertPassword(password);
    return ctx.db.transaction().execute(async (trx) => {
      const created = await bootstrapOwner(baseStores(trx), ctx, { email: request.email, workspace: request.workspace, plan: request.plan });
      if (password !== undefined) await setPassword(baseStores(trx), passwordHasher, created.userId, password);
      return created;
    });
  }
  if (request.command === 'set-password') {
    const email = normalizeEmail(request.email);
    assertPassword(request.password);
    const userId = await ctx.db.transaction().execute(async (trx) => {
      const user = await baseStores(trx).identity.findUserByEmail(email);
      if (!user) throw notFound(`no person with email ${email}`);
      await setPassword(baseStores(trx), passwordHasher, user.id, request.password);
      return user.id;
    });
    // The person's sign-in sessions ended with the old password; their sockets are re-checked now.
    await announceAccessChange(ctx.realtime, { userId });
    return { userId };
  }
  if (request.command === 'backup') {
    if (!runtime.database.pglite) throw badRequest('backup is for the embedded database; back up Postgres with its own tools (pg_dump)');
    return backupTo(runtime.database.pglite, request.to, request.force);
  }
  const client = await setClientVerified(baseStores(ctx.db), request.clientId, request.verified);
  return { clientId: client.id, verified: client.verified };
}

export function assertPassword(password: string): void {
  const problems = passwordProblems(password);
  if (problems.length > 0) throw badRequest(problems);
}

/**
 * A request as it arrives over the control socket (parsed JSON, anything at all), checked field
 * by field: exactly one of the commands with its fields, of their types and bounded.
 * A request that is not one is `invalid_input`, listing what is wrong.
 */
export function checkAdminRequest(value: unknown): AdminRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('request must be a JSON object');
  const fields = value as Record<string, unknown>;
  const problems: string[] = [];
  const text = (name: string, optional = false): string | undefined => {
    const field = fields[name];
    if (field === undefined && optional) return undefined;
    if (name === 'password') {
      // The password policy (10 to 200 characters) is checked where it is used, with its own messages.
      if (typeof field === 'string') return field;
      problems.push('password must be a string');
    } else if (typeof field !== 'string' || !field.trim()) problems.push(`${name} must be a non-empty string`);
    else if (field.length > (name === 'to' ? MAX_PATH_LENGTH : MAX_FIELD_LENGTH)) problems.push(`${name} must be at most ${name === 'to' ? MAX_PATH_LENGTH : MAX_FIELD_LENGTH} characters long`);
    else return field;
    return undefined;
  };
  const allowed = (names: string[]) => {
    for (const name of Object.keys(fields)) if (!names.includes(name)) problems.push(`${name} is not a field of ${String(fields.command)}`);
  };
  const done = <T extends AdminRequest>(request: T): T => {
    if (problems.length > 0) throw badRequest(problems);
    return request;
  };
  switch (fields.command) {
    case 'bootstrap': {
      allowed(['command', 'email', 'workspace', 'plan', 'password']);
      const email = text('email');
      const workspace = text('workspace');
      const plan = fields.plan;
      if (typeof plan !== 'string' || !isPlanName(plan)) problems.push('plan must be a plan name');
      const password = text('password', true);
      return done({ command: 'bootstrap', email: email!, workspace: workspace!, plan: plan as PlanName, ...(password !== undefined && { password }) });
    }
    case 'set-password': {
      allowed(['command', 'email', 'password']);
      return done({ command: 'set-password', email: text('email')!, password: text('password')! });
    }
    case 'verify-client': {
      allowed(['command', 'clientId', 'verified']);
      const clientId = text('clientId');
      if (typeof fields.verified !== 'boolean') problems.push('verified must be a boolean');
      return done({ command: 'verify-client', clientId: clientId!, verified: fields.verified as boolean });
    }
    case 'backup': {
      allowed(['command', 'to', 'force']);
      const to = text('to');
      if (to !== undefined && !to.startsWith('/')) problems.push('to must be an absolute path');
      if (typeof fields.force !== 'boolean') problems.push('force must be a boolean');
      return done({ command: 'backup', to: to!, force: fields.force as boolean });
    }
    default:
      throw badRequest(`command must be one of ${ADMIN_COMMANDS.join(', ')}`);
  }
}
