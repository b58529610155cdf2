import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type pg from 'pg';
import type { GraphSimulator } from '../support/graph-simulator.ts';
import { apiOf, createOfficialConnection, openOfficialLayout, type OfficialLayout } from '../support/official-layout.ts';
import { HOOK_TIMEOUT, onPostgres } from '../support/service.ts';
import { connectHelpdesk } from '../support/socket.ts';
import { waitFor } from '../support/wait.ts';

/**
 * "SIGTERM during a load drains with nothing lost", in the production layout on Postgres: an
 * HTTP server (`--no-worker`) and separate workers, real processes, sends to the Graph simulator.
 *
 * The server is stopped while 20 clients send 300 messages: every answered send is stored and
 * sent exactly once, nothing is stored that was not answered (no request cut half-way), requests
 * in flight at the signal (their bodies still arriving) are answered, a new connection is
 * refused, and a live Socket.IO client is told `server.shutdown` before its connection closes.
 * The worker is stopped while it holds a backlog: it exits within its bound with nothing left
 * claimed, so the next worker sends the rest at once, each exactly once.
 */
const CONTACTS = 60;
const CLIENTS = 20;
const PER_CLIENT = 15;
const SENDS = CLIENTS * PER_CLIENT;
const IN_FLIGHT = 3;

describe.skipIf(!onPostgres)('graceful shutdown under load (Postgres, server and worker processes)', () => {
  let layout: OfficialLayout;
  let sim: GraphSimulator;
  let env: Record<string, string>;
  let db: pg.Client;
  let token: string;
  let connectionId: string;

  beforeAll(async () => {
    layout = await openOfficialLayout('shutdown', { sendLatencyMs: 100 }, { DRAIN_SECONDS: '0' });
    ({ sim, env, db } = layout);
    token = layout.bootstrap('stop@example.com', 'Stop');
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    await layout?.close();
  }, HOOK_TIMEOUT);

  test(
    `the server SIGTERMed while ${CLIENTS} clients send ${SENDS} messages: answered sends are kept and sent once, in-flight requests answered, sockets told to reconnect`,
    async () => {
      const server = await spawnServer();
      const url = server.match[1]!;
      const worker = await spawnWorker();
      connectionId = await connect(url);
      const contacts = await contactsWhoWrote(url);
      const socket = await connectHelpdesk(url, token, { transports: ['websocket'] });
      const disconnected = new Promise<string>((resolve) => socket.socket.on('disconnect', (reason) => resolve(reason)));

      // Requests the server is reading when the signal comes: their bodies arrive after it.
      let finishBodies!: () => void;
      const bodiesHeld = new Promise<void>((resolve) => (finishBodies = resolve));
      const slow = Array.from({ length: IN_FLIGHT }, (_, i) => slowSend(url, { to: `+${contacts[i]!}`, text: `in flight ${i}` }, bodiesHeld));

      let answered = 0;
      let signalled = false;
      const outcomes: Array<{ status: number; id?: string } | { error: string }> = [];
      const clients = Array.from({ length: CLIENTS }, async (_, client) => {
        for (let i = 0; i < PER_CLIENT; i += 1) {
          const to = `+${contacts[(client * PER_CLIENT + i) % CONTACTS]!}`;
          try {
            const response = await fetch(`${url}/v3/connections/${connectionId}/chats/messages`, { method: 'POST', headers: headers(), body: JSON.stringify({ to, text: `load ${client}.${i}` }) });
            const body = (await response.json()) as { id?: string };
            outcomes.push({ status: response.status, id: body.id });
            answered += 1;
          } catch (error) {
            outcomes.push({ error: (error as { code?: string }).code ?? String(error) });
            // Once refused, this client has nowhere to go: the balancer would send it elsewhere.
            if (signalled) return;
          }
        }
      });

      await waitFor(() => (answered >= SENDS / 3 ? true : undefined), { what: 'a third of the load answered', timeout: 60_000, interval: 5 });
      const signalledAt = Date.now();
      signalled = true;
      server.process.kill('SIGTERM');
      const notice = await socket.next('server.shutdown', () => true, { timeoutMs: 10_000 });
      expect(notice).toEqual({ reconnect: true, retryAfterMs: expect.any(Number) });
      expect(notice.retryAfterMs).toBeGreaterThan(0);
      expect(await disconnected).toBe('transport close');
      // The listener is closed: a new connection is refused while the stop waits for the held bodies.
      await waitFor(async () => ((await fetch(`${url}/healthz`).catch(() => undefined)) === undefined ? true : undefined), { what: 'new connections refused', timeout: 10_000 });
      finishBodies();
      const slowOutcomes = await Promise.all(slow);
      await Promise.all(clients);
      expect(await server.process.exited).toBe(0);
      const stoppedInMs = Date.now() - signalledAt;
      socket.close();

      // The requests in flight at the signal were answered, not cut.
      expect(slowOutcomes.map((o) => o.status)).toEqual(Array(IN_FLIGHT).fill(201));
      const accepted = [...slowOutcomes, ...outcomes].flatMap((o) => ('status' in o && o.status === 201 && o.id ? [o.id] : []));
      const refused = outcomes.filter((o) => 'error' in o);
      const otherwise = outcomes.filter((o) => 'status' in o && o.status !== 201);
      console.log(`server stopped in ${stoppedInMs} ms; ${accepted.length} sends accepted, ${refused.length} refused after the stop`);
      expect(otherwise).toEqual([]);
      expect(accepted.length).toBeGreaterThan(SENDS / 3);
      expect(stoppedInMs).toBeLessThan(20_000);

      // Nothing half-written: exactly the answered sends are stored, and each is sent exactly once.
      const stored = await db.query<{ id: string }>(`select id from messages where direction = 'outbound' and connection_id = $1`, [connectionId]);
      expect(stored.rows.map((r) => r.id).sort()).toEqual([...accepted].sort());
      await waitFor(async () => ((await pendingCount()) === 0 ? true : undefined), { what: 'every accepted send sent', timeout: 60_000, interval: 200 });
      const counts = sim.sendsByOpaque();
      expect(accepted.filter((id) => counts.get(id) !== 1)).toEqual([]);
      expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
      worker.process.kill('SIGTERM');
      expect(await worker.process.exited).toBe(0);
    },
    180_000,
  );

  test(
    `the worker SIGTERMed with a backlog of ${SENDS}: it exits within its bound, gives its claims back at once, the next worker sends each exactly once`,
    async () => {
      const server = await spawnServer();
      const url = server.match[1]!;
      sim.callbackUrl = `${url}/v3/webhooks/whatsapp/${connectionId}`;
      const contacts = Array.from({ length: CONTACTS }, (_, i) => `4477010${String(10_000 + i)}`);
      for (const from of contacts) expect((await sim.deliverIncoming(sim.callbackUrl!, { from, type: 'text', text: { body: 'hello' } })).status).toBe(200);
      const ids: string[] = [];
      for (let i = 0; i < SENDS; i += 1) {
        const response = await fetch(`${url}/v3/connections/${connectionId}/chats/messages`, { method: 'POST', headers: headers(), body: JSON.stringify({ to: `+${contacts[i % CONTACTS]!}`, text: `backlog ${i}` }) });
        expect(response.status).toBe(201);
        ids.push(((await response.json()) as { id: string }).id);
      }
      const sentBefore = sim.sent.length;
      const first = await spawnWorker();
      await waitFor(() => (sim.sent.length >= sentBefore + 5 ? true : undefined), { what: 'the first sends on the wire', timeout: 60_000, interval: 2 });
      const held = await heldCount();
      const signalledAt = Date.now();
      first.process.kill('SIGTERM');
      expect(await first.process.exited).toBe(0);
      const exitedInMs = Date.now() - signalledAt;
      // Nothing waits for a lease to lapse: no send is left claimed or on the wire by the stopped worker.
      expect(await heldCount()).toBe(0);
      const leftAtExit = await pendingCount();
      console.log(`worker held ${held} at the signal, exited in ${exitedInMs} ms, ${leftAtExit} sends left to the next worker`);
      expect(exitedInMs).toBeLessThan(15_000);

      const second = await spawnWorker();
      const startedAt = Date.now();
      await waitFor(async () => ((await pendingCount()) === 0 ? true : undefined), { what: 'the rest sent by the next worker', timeout: 60_000, interval: 100 });
      const finishedInMs = Date.now() - startedAt;
      console.log(`the next worker sent the rest in ${finishedInMs} ms`);
      // Well before a lapsing lease (12 s) would have let anyone take them.
      expect(finishedInMs).toBeLessThan(12_000);
      const counts = sim.sendsByOpaque();
      expect(ids.filter((id) => counts.get(id) !== 1)).toEqual([]);
      expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
      const statuses = await db.query<{ status: string; n: number }>(`select status, count(*)::int as n from messages where id = any($1::uuid[]) group by status`, [ids]);
      expect(statuses.rows.reduce((sum, r) => sum + r.n, 0)).toBe(SENDS);
      expect(statuses.rows.filter((r) => !['SENT', 'DELIVERED', 'READ'].includes(r.status))).toEqual([]);
      for (const child of [second, server]) {
        child.process.kill('SIGTERM');
        expect(await child.process.exited).toBe(0);
      }
    },
    180_000,
  );

  function headers(): Record<string, string> {
    return { apikey: token, 'content-type': 'application/json' };
  }

  const spawnServer = () => layout.spawnServer();
  const spawnWorker = () => layout.spawnWorker();

  /** The simulator's number as a cloud-api connection, opened by the running worker. */
  async function connect(url: string): Promise<string> {
    const call = apiOf(url, token);
    const id = await createOfficialConnection(call, sim);
    await call('POST', `/v3/connections/${id}/connect`);
    await waitFor(async () => ((await call('GET', `/v3/connections/${id}`)).body.status === 'CONNECTED' ? true : undefined), { what: 'the connection to open', timeout: 30_000 });
    return id;
  }

  /** Contacts who wrote first, so free text is inside the 24-hour window (spec 3.4). */
  async function contactsWhoWrote(url: string): Promise<string[]> {
    sim.callbackUrl = `${url}/v3/webhooks/whatsapp/${connectionId}`;
    const contacts = Array.from({ length: CONTACTS }, (_, i) => `4477009${String(10_000 + i)}`);
    for (const from of contacts) expect((await sim.deliverIncoming(sim.callbackUrl, { from, type: 'text', text: { body: 'hello' } })).status).toBe(200);
    return contacts;
  }

  /** A send whose body stops half-way until `release`: a request in flight for that long. */
  async function slowSend(url: string, body: unknown, release: Promise<void>): Promise<{ status: number; id?: string }> {
    const text = new TextEncoder().encode(JSON.stringify(body));
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(text.slice(0, 10));
        await release;
        controller.enqueue(text.slice(10));
        controller.close();
      },
    });
    const response = await fetch(`${url}/v3/connections/${connectionId}/chats/messages`, { method: 'POST', headers: headers(), body: stream, duplex: 'half' } as RequestInit);
    return { status: response.status, id: ((await response.json()) as { id?: string }).id };
  }

  async function pendingCount(): Promise<number> {
    const result = await db.query<{ n: number }>(`select count(*)::int as n from messages where direction = 'outbound' and connection_id = $1 and status = 'PENDING'`, [connectionId]);
    return result.rows[0]!.n;
  }

  /** Sends claimed or on the wire (held by a worker). */
  async function heldCount(): Promise<number> {
    const result = await db.query<{ n: number }>(`select count(*)::int as n from messages where connection_id = $1 and send_state in ('claimed', 'in_flight')`, [connectionId]);
    return result.rows[0]!.n;
  }
});
