/**
 * The console's browser code, built by Bun's own bundler when the service first serves it: one
 * minified module (Preact and the Socket.IO client inside) and one stylesheet, named by their
 * content hash so a browser may keep them forever. Built in memory, once per process: nothing is
 * written to disk and nothing is fetched from the internet.
 */
import { fileURLToPath } from 'node:url';

export interface ConsoleAsset {
  bytes: ArrayBuffer;
  contentType: string;
}

export interface ConsoleBundle {
  /** Hashed file name → bytes, served under ASSET_PREFIX. */
  assets: Map<string, ConsoleAsset>;
  script: string;
  stylesheet: string;
}

export const ASSET_PREFIX = '/console/assets/';

const ENTRY = fileURLToPath(new URL('./ui/main.tsx', import.meta.url));

let built: Promise<ConsoleBundle> | undefined;

/** The bundle of this process (built on first use; a failed build is retried on the next call). */
export function consoleBundle(): Promise<ConsoleBundle> {
  built ??= buildConsole().catch((error) => {
    built = undefined;
    throw error;
  });
  return built;
}

async function buildConsole(): Promise<ConsoleBundle> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: 'browser',
    format: 'esm',
    minify: true,
    sourcemap: 'none',
    naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  if (!result.success) throw new Error(`The console did not build: ${result.logs.map((log) => String(log)).join('\n')}`);

  const assets = new Map<string, ConsoleAsset>();
  let script = '';
  let stylesheet = '';
  for (const output of result.outputs) {
    const name = output.path.split('/').pop()!;
    assets.set(name, { bytes: await output.arrayBuffer(), contentType: contentTypeOf(name) });
    if (output.kind === 'entry-point' && name.endsWith('.js')) script = name;
    if (name.endsWith('.css')) stylesheet = name;
  }
  if (!script || !stylesheet) throw new Error(`The console build lacks its script or stylesheet: ${[...assets.keys()].join(', ')}`);
  return { assets, script, stylesheet };
}

function contentTypeOf(name: string): string {
  if (name.endsWith('.js')) return 'text/javascript; charset=utf-8';
  if (name.endsWith('.css')) return 'text/css; charset=utf-8';
  if (name.endsWith('.svg')) return 'image/svg+xml';
  return 'application/octet-stream';
}
