/**
 * `bun run test`: what CI runs. Type-check, layering rules, core purity
 * (scripts/check-core-purity.ts), then the whole suite on the
 * embedded PGlite, then again on Postgres when one answers on 127.0.0.1:5432 (or at
 * TEST_DATABASE_URL). `--timeout 60000` gives every test 60 s: bun applies a preload's
 * setDefaultTimeout to the first test file only (tests/support/preload.ts covers single-file runs).
 */
import pg from 'pg';

const args = process.argv.slice(2);
const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

await step('type-check', ['node_modules/.bin/tsc', '--noEmit', '-p', '.']);
await step('layering', ['node_modules/.bin/depcruise', 'core', 'adapters', 'plugins', 'apps', 'tests/fixtures/example-plugin', '--config', '.dependency-cruiser.cjs']);
await step('core purity', [process.execPath, 'scripts/check-core-purity.ts', '.']);
await step('tests on PGlite', [process.execPath, 'test', '--timeout', '60000', ...args], { TEST_DATABASE_URL: '' });
if (await reachable(postgresUrl)) {
  await step('tests on Postgres', [process.execPath, 'test', '--timeout', '60000', ...args], { TEST_DATABASE_URL: postgresUrl });
} else {
  console.log(`\n== Postgres not reachable at ${redact(postgresUrl)}: suite ran on PGlite only`);
}

async function step(name: string, command: string[], env: Record<string, string> = {}) {
  console.log(`\n== ${name}`);
  const started = performance.now();
  const child = Bun.spawn(command, { stdio: ['inherit', 'inherit', 'inherit'], env: { ...process.env, ...env } });
  const code = await child.exited;
  if (code !== 0) {
    console.error(`\n== ${name} failed (exit ${code})`);
    process.exit(code || 1);
  }
  // The suite's time on each database is kept in docs/contributing.md.
  console.log(`\n== ${name} passed in ${Math.round((performance.now() - started) / 1000)} s`);
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
}
