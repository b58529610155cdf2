import { afterAll } from 'bun:test';

/**
 * A real HTTP receiver for webhook tests: records the raw bytes and headers of every request;
 * per path it can be told to answer a status, hang (hold the request open until released, past
 * the service's 10 s timeout) or close the socket.
 */
/** What the receiver answers: a status, hold the request open until released, or drop the socket. */
export type Reply = number | 'hang' | 'close';
export interface Hit {
  path: string;
  at: number;
  raw: Uint8Array;
  text: string;
  headers: Headers;
  json: any;
}

export function startReceiver() {
  const hits: Hit[] = [];
  const scripts = new Map<string, Reply[]>();
  const defaults = new Map<string, Reply>();
  const held: Array<() => void> = [];
  const open = new Map<string, number>();
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    // A hung request must stay open past the service's 10 s timeout.
    idleTimeout: 0,
    async fetch(request, srv) {
      const raw = new Uint8Array(await request.arrayBuffer());
      const path = new URL(request.url).pathname;
      const text = new TextDecoder().decode(raw);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {}
      hits.push({ path, at: Date.now(), raw, text, headers: request.headers, json });
      const reply = scripts.get(path)?.shift() ?? defaults.get(path) ?? 200;
      if (reply === 'hang' || reply === 'close') {
        open.set(path, (open.get(path) ?? 0) + 1);
        // 'close': Bun drops the socket once it has been idle this long (about a second or a few).
        if (reply === 'close') srv.timeout(request, 1);
        return new Promise<Response>((resolve) =>
          held.push(() => {
            open.set(path, (open.get(path) ?? 1) - 1);
            resolve(new Response('released'));
          }),
        );
      }
      return new Response(reply < 300 || reply >= 400 ? 'ok' : null, { status: reply });
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    url: (path: string) => `${base}${path}`,
    hits: (path: string) => hits.filter((h) => h.path === path),
    /** Replies for the next requests to `path`, in order; then the default. */
    script: (path: string, ...replies: Reply[]) => void scripts.set(path, replies),
    setDefault: (path: string, reply: Reply) => void defaults.set(path, reply),
    open: (path: string) => open.get(path) ?? 0,
    async waitFor(path: string, count: number, timeoutMs = 15_000): Promise<Hit[]> {
      const deadline = Date.now() + timeoutMs;
      while (this.hits(path).length < count) {
        if (Date.now() > deadline) throw new Error(`receiver: ${this.hits(path).length} of ${count} requests on ${path} after ${timeoutMs} ms`);
        await Bun.sleep(25);
      }
      return this.hits(path);
    },
    releaseAll() {
      for (const release of held.splice(0)) release();
    },
    stop() {
      this.releaseAll();
      server.stop(true);
    },
  };
}

/** A receiver for a test file: listening from the start, stopped after the file's last test. */
export function useReceiver(): Receiver {
  const receiver = startReceiver();
  afterAll(() => receiver.stop());
  return receiver;
}

export type Receiver = ReturnType<typeof startReceiver>;
