import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * Issue 21 §2: ".dependency-cruiser.cjs states the layering … A layering violation fails CI."
 * Each case builds a tiny tree with one import and runs the repository's own rules on it with the
 * same command `bun run test` uses: the rule named must fail it, and a tree without the import passes.
 */

const ROOT = resolve(import.meta.dir, '../..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise');
const made: string[] = [];

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-layering-'));
  made.push(dir);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

function cruise(dir: string): { code: number; output: string } {
  const run = Bun.spawnSync([DEPCRUISE, 'core', 'adapters', 'plugins', 'apps', 'tests/fixtures/example-plugin', '--config', CONFIG], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
  return { code: run.exitCode, output: run.stdout.toString() + run.stderr.toString() };
}

const BASE = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'esnext', moduleResolution: 'bundler', allowImportingTsExtensions: true, noEmit: true } }),
  'core/.keep': '',
  'adapters/.keep': '',
  'plugins/.keep': '',
  'apps/.keep': '',
  'tests/fixtures/example-plugin/.keep': '',
  'core/domain.ts': 'export const rule = 1;\n',
  'adapters/store.ts': "import { rule } from '../core/domain.ts';\nexport const store = rule;\n",
  'plugins/kernel/plugin.ts': "import { store } from '../../adapters/store.ts';\nexport const face = store;\n",
  'plugins/notes/index.ts': "import { face } from '../kernel/plugin.ts';\nimport { rule } from '../../core/domain.ts';\nexport const notes = face + rule;\n",
  'apps/main.ts': "import { store } from '../adapters/store.ts';\nexport const main = store;\n",
};

describe('the layering rules', () => {
  test('a tree that follows them passes', () => {
    const result = cruise(tree(BASE));
    expect(result.output).toContain('no dependency violations');
    expect(result.code).toBe(0);
  });

  const cases: [string, Record<string, string>][] = [
    ['core-is-pure', { 'core/leak.ts': "import { store } from '../adapters/store.ts';\nexport const leak = store;\n" }],
    ['plugins-reach-the-host-through-the-kernel', { 'plugins/notes/leak.ts': "import { store } from '../../adapters/store.ts';\nexport const leak = store;\n" }],
    ['plugins-reach-the-host-through-the-kernel', { 'tests/fixtures/example-plugin/leak.ts': "import { store } from '../../../adapters/store.ts';\nexport const leak = store;\n" }],
    ['plugins-do-not-call-each-other', { 'plugins/other/index.ts': "import { notes } from '../notes/index.ts';\nexport const other = notes;\n" }],
    ['adapters-reach-plugins-through-the-kernel', { 'adapters/leak.ts': "import { notes } from '../plugins/notes/index.ts';\nexport const leak = notes;\n" }],
    ['only-apps-import-apps', { 'adapters/leak.ts': "import { main } from '../apps/main.ts';\nexport const leak = main;\n" }],
  ];
  for (const [rule, files] of cases) {
    test(`${rule} fails a tree that breaks it (${Object.keys(files)[0]})`, () => {
      const result = cruise(tree({ ...BASE, ...files }));
      expect(result.code).not.toBe(0);
      expect(result.output).toContain(`error ${rule}:`);
    });
  }
});
