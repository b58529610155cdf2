import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Elysia } from 'elysia';

/**
 * The API reference UI of `/docs` (Scalar, from the `@scalar/api-reference` package) served by
 * the service itself, so the page works without internet access. The path carries the package's
 * version, so the file can be cached for a year.
 */
const bundle = locateBundle();

export const SCALAR_SCRIPT_PATH = `/docs/assets/api-reference${bundle ? `-${bundle.version}` : ''}.js`;

/**
 * The reference's configuration: nothing of it calls Scalar's site. Its default fonts,
 * telemetry and cloud features (AI agent, MCP and SDK generation, the toolbar) are off; system
 * fonts serve. Options of the Scalar we serve that @elysiajs/swagger's older type does not know.
 */
export const SCALAR_OFFLINE = {
  withDefaultFonts: false,
  telemetry: false,
  showToolbar: 'never',
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
} as const;

function locateBundle(): { file: string; version: string } | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
    const dist = dirname(entry);
    const version = (JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as { version: string }).version;
    return { file: join(dist, 'browser', 'standalone.js'), version };
  } catch {
    return undefined;
  }
}

let script: string | undefined;

export function scalarScript() {
  return new Elysia({ name: 'docs.assets', detail: { hide: true } }).get(SCALAR_SCRIPT_PATH, () => {
    if (!bundle) return new Response('The package @scalar/api-reference is not installed (npm install).', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    script ??= readFileSync(bundle.file, 'utf8');
    return new Response(script, {
      headers: {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      },
    });
  });
}
