/**
 * `bun scripts/check-core-purity.ts [root]`: lists the imports and calls in `<root>/core` that
 * break the house rule "core/ has no IO" — time, ids, randomness and IO come through ports.
 * Prints nothing and exits 0 when core/ is pure; otherwise prints each finding as
 * `path:line: text` and exits 1. Test files (`*.test.ts`) and comment lines are not checked.
 * `bun run test` runs it (scripts/test.ts, step "core purity").
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Modules that do IO (databases, HTTP, sockets, files, the runtime, crypto). */
const IO_MODULES = String.raw`pg|pg-boss|kysely|elysia|@elysiajs/[^'"]*|socket\.io[^'"]*|@electric-sql/[^'"]*|baileys|jose|node:[^'"]*|bun|bun:[^'"]*|fs|path|http|https|net|crypto|child_process|os`;

/** Each rule: a pattern that must not appear on a code line of core/, and why. */
export const RULES: ReadonlyArray<{ pattern: RegExp; reason: string }> = [
  { pattern: new RegExp(String.raw`(from\s+|import\s*\(\s*|^\s*import\s+)['"](${IO_MODULES})['"]`), reason: 'imports an IO module' },
  { pattern: /(from\s+|import\s*\(\s*|^\s*import\s+)['"](\.\.\/)+(adapters|plugins|apps)\//, reason: 'imports from adapters/, plugins/ or apps/' },
  {
    pattern: /\b(Bun\.|process\.env|Date\.now\(\)|new Date\(\)|Math\.random\(\)|fetch\(|setTimeout\(|setInterval\()/,
    reason: 'reads the runtime, the clock, randomness or the network directly',
  },
];

/** A line that is a comment as a whole (`// …`, or a line of a block comment starting with `*` or `/*`). */
const COMMENT_LINE = /^\s*(\/\/|\/?\*)/;

export interface Finding {
  file: string;
  line: number;
  text: string;
  reason: string;
}

/** Every violation under `<root>/core`; none when there is no core/ folder. */
export async function checkCorePurity(root: string): Promise<Finding[]> {
  const core = join(root, 'core');
  const exists = await stat(core).then((s) => s.isDirectory(), () => false);
  if (!exists) return [];
  const files = (await readdir(core, { recursive: true }))
    .map(String)
    .filter((name) => /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name))
    .sort();
  const findings: Finding[] = [];
  for (const name of files) {
    const path = join(core, name);
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines.forEach((text, index) => {
      if (COMMENT_LINE.test(text)) return;
      const rule = RULES.find((r) => r.pattern.test(text));
      if (rule) findings.push({ file: relative(root, path) || path, line: index + 1, text: text.trim(), reason: rule.reason });
    });
  }
  return findings;
}

if (import.meta.main) {
  const root = process.argv[2] ?? '.';
  const findings = await checkCorePurity(root);
  if (findings.length > 0) {
    console.error('core/ must have no IO (house rules); time, ids, randomness and IO come through ports:');
    for (const f of findings.slice(0, 30)) console.error(`${f.file}:${f.line}: ${f.text}  (${f.reason})`);
    if (findings.length > 30) console.error(`… and ${findings.length - 30} more`);
    process.exit(1);
  }
}
