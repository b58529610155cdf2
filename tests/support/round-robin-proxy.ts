import type { Socket } from 'bun';

/**
 * A small TCP load balancer for multi-process tests: each client connection goes to the next
 * backend in turn and its bytes are copied both ways untouched, so HTTP and websocket upgrades
 * (Socket.IO) pass through as they are. A backend that refuses the connection (its process is
 * dead) is skipped for the next one, as a load balancer retrying on a connect error does; there
 * are no active health checks, so a connection already open to a backend that dies is simply cut.
 * HTTP clients that want their requests spread must not reuse connections (`connection: close`).
 */
export interface RoundRobinProxy {
  url: string;
  /** The backends' ports, in turn order; may change while the proxy runs. */
  setBackends(ports: number[]): void;
  /** Connections forwarded to each backend port so far. */
  forwarded(): Map<number, number>;
  /** The backend port the latest connection went to. */
  lastBackend(): number | undefined;
  stop(): void;
}

interface Link {
  upstream?: Socket<Link>;
  /** Client bytes that arrived before the backend connection opened, or that it could not take yet. */
  toUpstream: Uint8Array[];
  /** Backend bytes the client could not take yet. */
  toClient: Uint8Array[];
  client?: Socket<Link>;
  closed: boolean;
}

export async function startRoundRobinProxy(): Promise<RoundRobinProxy> {
  let backends: number[] = [];
  let turn = 0;
  let last: number | undefined;
  const counts = new Map<number, number>();

  /** Writes what is queued, keeping what the socket did not take for its next drain. */
  const flush = (socket: Socket<Link>, queue: Uint8Array[]) => {
    while (queue.length > 0) {
      const chunk = queue[0]!;
      const written = socket.write(chunk);
      if (written < chunk.length) {
        queue[0] = chunk.subarray(Math.max(written, 0));
        return;
      }
      queue.shift();
    }
  };

  async function connectUpstream(link: Link, client: Socket<Link>): Promise<void> {
    const start = turn++;
    for (let i = 0; i < backends.length; i += 1) {
      const port = backends[(start + i) % backends.length]!;
      try {
        const upstream = await Bun.connect<Link>({
          hostname: '127.0.0.1',
          port,
          data: link,
          socket: {
            data(_socket, chunk) {
              link.toClient.push(new Uint8Array(chunk));
              flush(client, link.toClient);
            },
            drain(socket) {
              flush(socket, link.toUpstream);
            },
            close() {
              link.closed = true;
              // The client still gets what the backend sent before closing.
              if (link.toClient.length === 0) client.end();
            },
            error() {},
          },
        });
        if (link.closed) {
          upstream.end();
          return;
        }
        link.upstream = upstream;
        last = port;
        counts.set(port, (counts.get(port) ?? 0) + 1);
        flush(upstream, link.toUpstream);
        return;
      } catch {
        // Refused: that backend is down; the next one takes the connection.
      }
    }
    client.end();
  }

  const listener = Bun.listen<Link>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const link: Link = { toUpstream: [], toClient: [], client, closed: false };
        client.data = link;
        void connectUpstream(link, client);
      },
      data(client, chunk) {
        const link = client.data;
        // Bun reuses the chunk's memory after this call: keep a copy.
        link.toUpstream.push(new Uint8Array(chunk));
        if (link.upstream) flush(link.upstream, link.toUpstream);
      },
      drain(client) {
        const link = client.data;
        flush(client, link.toClient);
        if (link.closed && link.toClient.length === 0) client.end();
      },
      close(client) {
        const link = client.data;
        if (!link.closed) link.upstream?.end();
        link.closed = true;
      },
      error() {},
    },
  });

  return {
    url: `http://127.0.0.1:${listener.port}`,
    setBackends(ports) {
      backends = [...ports];
    },
    forwarded: () => new Map(counts),
    lastBackend: () => last,
    stop() {
      listener.stop(true);
    },
  };
}
