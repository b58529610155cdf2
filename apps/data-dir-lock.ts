import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DataDirLock {
  release(): void;
}

export class DataDirBusyError extends Error {}

/**
 * The embedded database is one process's alone. A pid file in DATA_DIR says who holds it;
 * a second process (the CLI while the server runs) is turned away with a clear message,
 * and a stale file left by a crashed process is taken over.
 */
export function holdDataDir(dataDir: string): DataDirLock {
  // Made readable by its owner only: it holds the database and the control socket (apps/control-socket.ts).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, 'switchboard.pid');
  const holder = readHolder(file);
  if (holder && holder !== process.pid && isAlive(holder)) {
    throw new DataDirBusyError(
      `The embedded database in ${dataDir} is in use by another Switchboard process (pid ${holder}). ` +
        'Stop it first (the CLI and the server cannot share the embedded database), or set DATABASE_URL to use Postgres.',
    );
  }
  writeFileSync(file, String(process.pid));
  return {
    release() {
      if (readHolder(file) === process.pid) rmSync(file, { force: true });
    },
  };
}

function readHolder(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
