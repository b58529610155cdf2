/**
 * The core purity check (scripts/check-core-purity.ts, step "core purity" of `bun run test`):
 * core/ has no IO — time, ids, randomness and IO come through ports. Run as CI runs it, on a
 * temporary tree: a clean core/ passes, each kind of violation fails it.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const script = join(import.meta.dir, '../../scripts/check-core-purity.ts');
const roots: string[] = [];

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'core-purity-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

async function check(root: string): Promise<{ code: number; output: string }> {
  const child = Bun.spawn([process.execPath, script, root], { stdout: 'pipe', stderr: 'pipe' });
  const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, output: out + err };
}

afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

const clean = {
  'core/shared/ports.ts': "export interface Clock { now(): Date }\n",
  'core/messaging/send.ts': [
    "import type { Clock } from '../shared/ports.ts';",
    '// Date.now() and process.env are read by adapters, never here.',
    '/**',
    ' * new Date() comes from the clock port; fetch( goes through a driver.',
    ' */',
    'export const at = (clock: Clock) => clock.now();',
    '',
  ].join('\n'),
  // Test files are not checked.
  'core/messaging/send.test.ts': "import { readFileSync } from 'fs';\nexport const now = Date.now();\n",
};

describe('core purity check', () => {
  test('a core/ without IO passes, comments and test files included', async () => {
    const result = await check(await tree(clean));
    expect(result).toEqual({ code: 0, output: '' });
  });

  test('a tree without core/ passes', async () => {
    expect((await check(await tree({ 'adapters/x.ts': "import pg from 'pg';\n" }))).code).toBe(0);
  });

  test('the repository core/ passes', async () => {
    expect(await check(join(import.meta.dir, '../..'))).toEqual({ code: 0, output: '' });
  });

  const violations: Array<[string, string]> = [
    ['an IO module', "import { Kysely } from 'kysely';"],
    ['a node: module', "import { readFile } from 'node:fs/promises';"],
    ['bun', "import { $ } from 'bun';"],
    ['a dynamic import of an IO module', "const pg = await import('pg');"],
    ['adapters/', "import { store } from '../../adapters/postgres/stores.ts';"],
    ['plugins/', "import type { Plugin } from '../plugins/plugin.ts';"],
    ['apps/', "import { x } from '../../apps/plugin-events.ts';"],
    ['Bun.', 'export const file = Bun.file("x");'],
    ['process.env', 'export const url = process.env.DATABASE_URL;'],
    ['Date.now()', 'export const at = Date.now();'],
    ['new Date()', 'export const at = new Date();'],
    ['Math.random()', 'export const id = Math.random();'],
    ['fetch(', 'export const get = () => fetch("https://example.com");'],
    ['setTimeout(', 'setTimeout(() => {}, 10);'],
    ['setInterval(', 'setInterval(() => {}, 10);'],
  ];
  for (const [what, line] of violations) {
    test(`${what} in core/ fails it, naming the file and line`, async () => {
      const result = await check(await tree({ ...clean, 'core/messaging/bad.ts': `export const ok = 1;\n${line}\n` }));
      expect(result.code).toBe(1);
      expect(result.output).toContain(`core/messaging/bad.ts:2: ${line}`);
    });
  }
});
