import { join } from 'node:path';

/** The repository root: where `apps/server/main.ts` runs from. */
export const ROOT = join(import.meta.dir, '../..');

// ------------------------------------------------------------------------------------------
// The service as a process of its own.
// ------------------------------------------------------------------------------------------

export interface ServerProcess {
  url: string;
  pid: number;
  log(): string;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A process of the service (`bun <args>`) with this environment; resolves once its output
 * matches `ready` (what matched is returned). Both pipes are read for the whole life of the
 * process, so it never blocks on a full pipe.
 */
export async function spawnServiceProcess(args: string[], env: Record<string, string | undefined>, ready: RegExp): Promise<{ process: ReturnType<typeof Bun.spawn>; match: RegExpMatchArray; log(): string }> {
  const child = Bun.spawn([process.execPath, ...args], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' });
  let output = '';
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      output += decoder.decode(value, { stream: true });
    }
  };
  void drain(child.stdout as ReadableStream<Uint8Array>);
  void drain(child.stderr as ReadableStream<Uint8Array>);
  const deadline = Date.now() + 60_000;
  while (!ready.test(output)) {
    if (child.exitCode !== null || child.signalCode) throw new Error(`${args[0]} exited before it was ready:\n${output}`);
    if (Date.now() > deadline) throw new Error(`${args[0]} did not start:\n${output}`);
    await Bun.sleep(25);
  }
  return { process: child, match: output.match(ready)!, log: () => output };
}

/**
 * The service as a real process (`bun apps/server/main.ts`, server and worker in one) with this
 * environment; resolves once it listens. `kill()` is SIGKILL: no graceful stop.
 */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const { process: child, match, log } = await spawnServiceProcess(['apps/server/main.ts'], env, /listening on (http:\/\/\S+)/);
  return {
    url: match[1]!,
    pid: child.pid,
    log,
    async kill() {
      child.kill('SIGKILL');
      await child.exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode) return;
      child.kill('SIGTERM');
      const stopped = await Promise.race([child.exited.then(() => true), Bun.sleep(15_000).then(() => false)]);
      if (!stopped) {
        child.kill('SIGKILL');
        await child.exited;
      }
    },
  };
}


/** One API call to a service process as the holder of `apikey`; the body parsed as JSON. */
export async function callProcess(server: ServerProcess, apikey: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { apikey, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}
