import { parseArgs } from 'node:util';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { isPlanName } from '../../core/plans/plans.ts';
import { DomainError } from '../../core/shared/errors.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { loadConfig } from '../config.ts';
import { openRuntime } from '../runtime.ts';

const USAGE = `Usage:
  bun run cli bootstrap --email E --workspace NAME [--plan FREE|PRO]
      Creates an Owner, a workspace and an API token; prints {"userId","workspaceId","token"}.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'bootstrap') {
    console.error(USAGE);
    return command === 'help' || command === '--help' ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: { email: { type: 'string' }, workspace: { type: 'string' }, plan: { type: 'string', default: 'FREE' } },
    strict: true,
  });
  const plan = values.plan!.toUpperCase();
  if (!values.email || !values.workspace?.trim() || !isPlanName(plan)) {
    console.error(USAGE);
    return 2;
  }

  const runtime = await openRuntime(loadConfig());
  try {
    const result = await runtime.ctx.db
      .transaction()
      .execute((trx) => bootstrapOwner(baseStores(trx), runtime.ctx, { email: values.email!, workspace: values.workspace!, plan }));
    console.log(JSON.stringify(result));
    return 0;
  } finally {
    await runtime.close();
  }
}

try {
  process.exit(await main(process.argv.slice(2)));
} catch (error) {
  const message = error instanceof DomainError || error instanceof Error ? error.message : String(error);
  console.error(`bootstrap failed: ${message}`);
  process.exit(1);
}
