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
 * The service as a real process (`bun apps/server/main.ts`, server and worker in one) with this
 * environment; resolves once it listens. `kill()` is SIGKILL: no graceful stop.
 */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = Bun.spawn([process.execPath, 'apps/server/main.ts'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' });
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
  // Keep reading both pipes for the whole life of the process, so it never blocks on a full pipe.
  void drain(child.stdout);
  void drain(child.stderr);
  const deadline = Date.now() + 60_000;
  while (!/listening on (http:\/\/\S+)/.test(output)) {
    if (child.exitCode !== null || child.signalCode) throw new Error(`server exited before listening:\n${output}`);
    if (Date.now() > deadline) throw new Error(`server did not start:\n${output}`);
    await Bun.sleep(25);
  }
  return {
    url: output.match(/listening on (http:\/\/\S+)/)![1]!,
    pid: child.pid,
    log: () => output,
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
