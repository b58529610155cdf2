import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DATA_DIR as a gzipped tar (ustar): its directories and regular files, less the names given
 * (the holder's pid file and control socket). PGlite's own `dumpDataDir` cannot be used on a
 * running service's DATA_DIR: it stops at the control socket, which is not a file. Unpacked by
 * `Bun.Archive`.
 */
export function packDataDir(dir: string, leaveOut: Set<string>): Uint8Array {
  const blocks: Uint8Array[] = [];
  const walk = (relative: string) => {
    for (const name of readdirSync(join(dir, relative)).sort()) {
      const path = relative ? `${relative}/${name}` : name;
      if (!relative && leaveOut.has(name)) continue;
      const stat = lstatSync(join(dir, path));
      if (stat.isDirectory()) {
        blocks.push(header(`${path}/`, stat.mode, 0, stat.mtimeMs, '5'));
        walk(path);
      } else if (stat.isFile()) {
        const data = readFileSync(join(dir, path));
        blocks.push(header(path, stat.mode, data.byteLength, stat.mtimeMs, '0'), data);
        const padding = (512 - (data.byteLength % 512)) % 512;
        if (padding) blocks.push(new Uint8Array(padding));
      }
      // Sockets, links and devices are no part of a database: left out.
    }
  };
  walk('');
  blocks.push(new Uint8Array(1024));
  return Bun.gzipSync(Buffer.concat(blocks));
}

function header(path: string, mode: number, size: number, mtimeMs: number, type: '0' | '5'): Uint8Array {
  const block = Buffer.alloc(512);
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = path.lastIndexOf('/', path.length - 2);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) throw new Error(`path too long for the archive: ${path}`);
  }
  const field = (offset: number, length: number, value: string) => block.write(value, offset, length, 'utf8');
  const octal = (offset: number, length: number, value: number) => field(offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
  field(0, 100, name);
  octal(100, 8, mode & 0o7777);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, Math.floor(mtimeMs / 1000));
  field(148, 8, '        ');
  field(156, 1, type);
  field(257, 6, 'ustar\0');
  field(263, 2, '00');
  field(345, 155, prefix);
  let sum = 0;
  for (const byte of block) sum += byte;
  field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}
