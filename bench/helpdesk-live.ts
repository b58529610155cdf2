import { io, type Socket } from 'socket.io-client';
import { CONNECTION_INBOXES, inboxesOf, type Scale, type SeededAgent } from './helpdesk-seed.ts';
import { percentile } from './closed-loop.ts';

/**
 * The live part of `bench:helpdesk`: every seeded agent connected to `/helpdesk` (a real
 * socket.io-client over websocket each, all on the one server process), then contacts writing
 * in through the sandbox line of each CONNECTION inbox at a steady rate (`POST
 * /v3/connections/{id}/sandbox/messages`: stored by the server, turned into a helpdesk message by
 * the worker, sent to the sockets through Postgres NOTIFY). Timed from the moment the message is
 * posted to the moment `helpdesk.message.created` carrying it reaches each socket that should
 * hear it (the inbox's members and the Manager).
 */
export interface LiveOptions {
  url: string;
  ownerToken: string;
  /** The sandbox connection of CONNECTION inbox i (0-based, as `inboxesOf` numbers them). */
  connectionIds: string[];
  agents: SeededAgent[];
  scale: Scale;
  messages: number;
  perSecond: number;
}

export async function measureLive(options: LiveOptions): Promise<void> {
  const { agents, scale } = options;
  const arrivals = new Map<number, Map<number, number>>(); // message → agent → when
  const connectStarted = performance.now();
  const sockets: Socket[] = [];
  for (let i = 0; i < agents.length; i += 50) {
    sockets.push(...(await Promise.all(agents.slice(i, i + 50).map((agent) => connect(options.url, agent, arrivals)))));
  }
  // As clients are asked to (docs/helpdesk.md): a heartbeat every 20 s keeps each member online (without it every
  // member would go offline 60 s in, all at once, in the middle of the measurement). Spread over
  // the 20 s, as members' clients are.
  let beat = 0;
  const heartbeat = setInterval(() => sockets[beat++ % sockets.length]!.emit('presence:online'), 20_000 / sockets.length);
  // Each connection announces the member online to every socket of the workspace: wait until that settles.
  await quiet(sockets, 'presence.update', 2000);
  console.log(`${sockets.length} sockets connected and their presence settled in ${((performance.now() - connectStarted) / 1000).toFixed(1)} s`);

  const phones = 100;
  const sent = new Map<number, number>();
  const accepted: number[] = [];
  /** Message k from phone k % phones on line k % lines, at `perSecond` from the first. */
  async function writeIn(first: number, count: number): Promise<void> {
    const t0 = performance.now();
    const posts: Promise<void>[] = [];
    for (let k = first; k < first + count; k++) {
      const due = t0 + ((k - first) * 1000) / options.perSecond;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      posts.push(post(k));
    }
    await Promise.all(posts);
  }
  async function post(k: number): Promise<void> {
    const line = k % CONNECTION_INBOXES;
    const at = performance.now();
    sent.set(k, at);
    const response = await fetch(`${options.url}/v3/connections/${options.connectionIds[line]}/sandbox/messages`, {
      method: 'POST',
      headers: { apikey: options.ownerToken, 'content-type': 'application/json' },
      body: JSON.stringify({ from: `+55119880${String(k % phones).padStart(5, '0')}`, text: `bench-live-${k} where is my order` }),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`sandbox message ${k}: ${response.status}`);
    accepted.push(performance.now() - at);
  }

  // Each phone writes once first (its contact and conversation are created), unmeasured.
  await writeIn(0, phones);
  await settle(arrivals, phones, 0, 10_000);
  arrivals.clear();
  accepted.length = 0;

  const first = phones;
  const started = performance.now();
  await writeIn(first, options.messages);
  const listeners = (k: number) => agents.filter((a) => inboxesOf(a.index, scale).includes(k % CONNECTION_INBOXES)).map((a) => a.index);
  await settle(arrivals, options.messages, first, 15_000);
  const seconds = (performance.now() - started) / 1000;

  const deliveries: number[] = [];
  const slowest: number[] = [];
  let missing = 0;
  for (let k = first; k < first + options.messages; k++) {
    const heard = arrivals.get(k) ?? new Map<number, number>();
    const expected = listeners(k);
    missing += expected.filter((a) => !heard.has(a)).length;
    const times = [...heard.values()].map((at) => at - sent.get(k)!);
    deliveries.push(...times);
    if (times.length > 0) slowest.push(Math.max(...times));
  }
  deliveries.sort((a, b) => a - b);
  slowest.sort((a, b) => a - b);
  accepted.sort((a, b) => a - b);
  const fanOut = deliveries.length / options.messages;
  console.log(
    `${options.messages} messages at ${options.perSecond}/s over ${seconds.toFixed(1)} s, ${sockets.length} sockets, ` +
      `${fanOut.toFixed(1)} sockets per message on average, ${missing} deliveries missing`,
  );
  console.log(`sandbox POST (stored, 201)       p50 ${percentile(accepted, 50).padStart(8)} ms  p99 ${percentile(accepted, 99).padStart(8)} ms`);
  console.log(`inbound → socket, every delivery p50 ${percentile(deliveries, 50).padStart(8)} ms  p95 ${percentile(deliveries, 95).padStart(8)} ms  p99 ${percentile(deliveries, 99).padStart(8)} ms`);
  console.log(`inbound → last socket of message p50 ${percentile(slowest, 50).padStart(8)} ms  p95 ${percentile(slowest, 95).padStart(8)} ms  p99 ${percentile(slowest, 99).padStart(8)} ms`);
  clearInterval(heartbeat);
  for (const socket of sockets) socket.close();
}

/** Resolves once no socket has heard `event` for `ms`. */
async function quiet(sockets: Socket[], event: string, ms: number): Promise<void> {
  let last = performance.now();
  for (const socket of sockets) socket.on(event, () => (last = performance.now()));
  while (performance.now() - last < ms) await Bun.sleep(200);
  for (const socket of sockets) socket.off(event);
}

function connect(url: string, agent: SeededAgent, arrivals: Map<number, Map<number, number>>): Promise<Socket> {
  const socket = io(`${url}/helpdesk`, { path: '/ws', query: { apikey: agent.token }, transports: ['websocket'], reconnection: false, forceNew: true });
  socket.on('helpdesk.message.created', (event: { message?: { content?: string } }) => {
    const at = performance.now();
    const marker = /^bench-live-(\d+)/.exec(event.message?.content ?? '');
    if (!marker) return;
    const k = Number(marker[1]);
    let heard = arrivals.get(k);
    if (!heard) arrivals.set(k, (heard = new Map()));
    if (!heard.has(agent.index)) heard.set(agent.index, at);
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (error) => reject(new Error(`agent ${agent.index}: ${error.message}`)));
  });
}

/** Waits until every message from `first` on was heard by someone, or `timeoutMs` passed. */
async function settle(arrivals: Map<number, Map<number, number>>, count: number, first: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const heardAll = () => Array.from({ length: count }, (_, i) => first + i).every((k) => arrivals.has(k));
  while (!heardAll() && Date.now() < deadline) await Bun.sleep(100);
  // The last sockets of the last message.
  await Bun.sleep(500);
}
