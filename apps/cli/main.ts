import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { normalizeEmail } from '../../core/identity/workspaces.ts';
import { isPlanName } from '../../core/plans/plans.ts';
import { DomainError } from '../../core/shared/errors.ts';
import { assertPassword, runAdminCommand, type AdminRequest } from '../admin-commands.ts';
import { loadConfig } from '../config.ts';
import { CONTROL_BACKUP_TIMEOUT_MS, sendControlRequest } from '../control-socket.ts';
import { DataDirBusyError } from '../data-dir-lock.ts';
import { openRuntime } from '../runtime.ts';
import { backupStopped, restoreFrom } from './embedded-backup.ts';
import { exportTo, importInto } from './move-to-postgres.ts';
import { logToStandardError } from '../../adapters/logging/logger.ts';

// Standard output is the command's answer (one JSON line): whatever the runtime logs goes to standard error.
logToStandardError();

const USAGE = `Usage:
  bun run cli bootstrap --email E --workspace NAME [--plan FREE|PRO] [--password-stdin | --password P]
      Creates an Owner, a workspace and an API token; prints {"userId","workspaceId","token"}.
      --password-stdin reads the Owner's password (10 to 200 characters) from standard input,
      so they can sign in on the web pages (OAuth consent). --password P is for scripts; the
      password is then visible to other users of the machine (ps, shell history).
  bun run cli set-password --email E
      Sets the password of an existing person, read from standard input; prints {"userId"}.
  bun run cli verify-client --client-id ID [--revoke]
      Platform operator only: gives an OAuth app the verified badge on the consent screen (or
      takes it away); changes no permission and skips no consent. Prints {"clientId","verified"}.
Each works while the service runs too: on the embedded database the running service carries it
out (over DATA_DIR/control.sock), with the same output.

The embedded database (DATABASE_URL unset):
  bun run cli backup --to FILE [--force]
      Writes a backup of DATA_DIR's database to FILE (mode 0600); works while the service runs
      (the service writes it between two transactions). --force replaces an existing FILE.
      Prints {"file","bytes","createdAt","migrations"}.
  bun run cli restore --from FILE [--force]
      Restores a backup into DATA_DIR, with the service stopped. --force replaces a database
      already there, which is kept aside as DATA_DIR.replaced-TIME.
      Prints {"dataDir","createdAt","migrations","replaced"}.
  bun run cli export --to FILE [--force]
      With the service stopped: the whole database (queued jobs too) as SQL, to move to Postgres.
      Prints {"file","bytes","createdAt","migrations"}.
  DATABASE_URL=postgres://… bun run cli import --from FILE
      Loads an export into an empty Postgres database, all or nothing.
      Prints {"createdAt","migrations","tables"}.`;

const COMMANDS = ['bootstrap', 'set-password', 'verify-client', 'backup', 'restore', 'export', 'import'];

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'bootstrap') return await bootstrap(rest);
    if (command === 'set-password') return await setPasswordCommand(rest);
    if (command === 'verify-client') return await verifyClientCommand(rest);
    if (command === 'backup') return await backupCommand(rest);
    if (command === 'restore') return await restoreCommand(rest);
    if (command === 'export') return await exportCommand(rest);
    if (command === 'import') return await importCommand(rest);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message) console.error(error.message);
    console.error(USAGE);
    return 2;
  }
  console.error(USAGE);
  return command === 'help' || command === '--help' ? 0 : 2;
}

async function bootstrap(args: string[]): Promise<number> {
  const values = parse(args, {
    email: { type: 'string' },
    workspace: { type: 'string' },
    plan: { type: 'string', default: 'FREE' },
    password: { type: 'string' },
    'password-stdin': { type: 'boolean', default: false },
  });
  const plan = String(values.plan).toUpperCase();
  if (typeof values.email !== 'string' || typeof values.workspace !== 'string' || !values.workspace.trim() || !isPlanName(plan)) throw new UsageError('');
  if (values.password !== undefined && values['password-stdin']) throw new UsageError('Give --password or --password-stdin, not both.');
  const password = values['password-stdin'] ? await readPassword() : (values.password as string | undefined);
  if (password !== undefined) assertPassword(password);
  return execute({ command: 'bootstrap', email: values.email, workspace: values.workspace, plan, ...(password !== undefined && { password }) });
}

async function setPasswordCommand(args: string[]): Promise<number> {
  const values = parse(args, { email: { type: 'string' } });
  if (typeof values.email !== 'string') throw new UsageError('');
  const email = normalizeEmail(values.email);
  const password = await readPassword();
  assertPassword(password);
  return execute({ command: 'set-password', email, password });
}

async function verifyClientCommand(args: string[]): Promise<number> {
  const values = parse(args, { 'client-id': { type: 'string' }, revoke: { type: 'boolean', default: false } });
  if (typeof values['client-id'] !== 'string' || !values['client-id']) throw new UsageError('');
  return execute({ command: 'verify-client', clientId: values['client-id'], verified: !values.revoke });
}

/**
 * The CLI dumps the database itself when it can hold DATA_DIR; while the service holds it, the
 * service dumps it (between two transactions) and writes FILE, asked over the control socket.
 */
async function backupCommand(args: string[]): Promise<number> {
  const values = parse(args, { to: { type: 'string' }, force: { type: 'boolean', default: false } });
  if (typeof values.to !== 'string' || !values.to) throw new UsageError('');
  const config = embeddedConfig('backup');
  const to = resolve(values.to);
  const force = Boolean(values.force);
  try {
    return printed(await backupStopped(config.dataDir, to, force));
  } catch (error) {
    if (!(error instanceof DataDirBusyError)) throw error;
    const reply = await sendControlRequest(config.dataDir, { command: 'backup', to, force }, CONTROL_BACKUP_TIMEOUT_MS);
    if (!reply) throw error;
    if (!reply.ok) throw new Error(reply.error);
    return printed(reply.result);
  }
}

async function restoreCommand(args: string[]): Promise<number> {
  const values = parse(args, { from: { type: 'string' }, force: { type: 'boolean', default: false } });
  if (typeof values.from !== 'string' || !values.from) throw new UsageError('');
  const config = embeddedConfig('restore');
  try {
    return printed(await restoreFrom(resolve(config.dataDir), resolve(values.from), Boolean(values.force)));
  } catch (error) {
    if (!(error instanceof DataDirBusyError)) throw error;
    throw new Error(
      `the service is running on ${config.dataDir}: stop it first. It keeps the database open and writes it as it goes, ` +
        'so a restore under it would be overwritten or corrupt it.',
    );
  }
}

async function exportCommand(args: string[]): Promise<number> {
  const values = parse(args, { to: { type: 'string' }, force: { type: 'boolean', default: false } });
  if (typeof values.to !== 'string' || !values.to) throw new UsageError('');
  const config = embeddedConfig('export');
  try {
    return printed(await exportTo(config.dataDir, resolve(values.to), Boolean(values.force)));
  } catch (error) {
    if (!(error instanceof DataDirBusyError)) throw error;
    throw new Error(`the service is running on ${config.dataDir}: stop it first, so nothing is written after the export (it would not reach Postgres).`);
  }
}

async function importCommand(args: string[]): Promise<number> {
  const values = parse(args, { from: { type: 'string' } });
  if (typeof values.from !== 'string' || !values.from) throw new UsageError('');
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error('set DATABASE_URL to the Postgres database to import into (a new, empty one)');
  return printed(await importInto(config.databaseUrl, resolve(values.from)));
}

/** The configuration of a command of the embedded database: refused, with the reason, on Postgres. */
function embeddedConfig(command: string) {
  const config = loadConfig();
  if (config.databaseUrl) throw new Error(`${command} is for the embedded database (DATABASE_URL is set); on Postgres use its own tools (pg_dump, pg_restore)`);
  return config;
}

function printed(result: unknown): number {
  console.log(JSON.stringify(result));
  return 0;
}

/**
 * Runs the command on a runtime of its own; when a running service holds the embedded database,
 * asks that service to run it over its control socket in DATA_DIR instead. The output is the same.
 */
async function execute(request: AdminRequest): Promise<number> {
  const config = loadConfig();
  let runtime;
  try {
    runtime = await openRuntime(config);
  } catch (error) {
    if (!(error instanceof DataDirBusyError)) throw error;
    const reply = await sendControlRequest(config.dataDir, request);
    if (!reply) throw error;
    if (!reply.ok) throw new Error(reply.error);
    console.log(JSON.stringify(reply.result));
    return 0;
  }
  try {
    console.log(JSON.stringify(await runAdminCommand(runtime, request)));
    return 0;
  } finally {
    await runtime.close();
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

function parse(args: string[], options: Options): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The whole of standard input, less one trailing line break (what `echo` or a heredoc adds). */
async function readPassword(): Promise<string> {
  const text = await Bun.stdin.text();
  return text.replace(/\r?\n$/, '');
}

const command = process.argv[2];
try {
  process.exit(await main(process.argv.slice(2)));
} catch (error) {
  const message = error instanceof DomainError || error instanceof Error ? error.message : String(error);
  console.error(`${COMMANDS.includes(command ?? '') ? command : 'bootstrap'} failed: ${message}`);
  process.exit(1);
}
