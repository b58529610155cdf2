import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { PGlite } from '@electric-sql/pglite';
import { startGraphSimulator, type GraphSimulator } from '../support/graph-simulator.ts';
import { useInstallation } from '../support/installation.ts';
import { midBatch } from '../support/mid-batch.ts';
import { cloudApiCredentials } from '../support/official-connection.ts';
import { parseExposition } from '../support/prometheus-text.ts';
import { callProcess, type ServerProcess } from '../support/server-process.ts';
import { HOOK_TIMEOUT, onPostgres } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';

/**
 * "Never twice" on the embedded database (the mirror of official-send-crash.test.ts, which runs
 * on Postgres): here the service is ONE process (`apps/server/main.ts`, the worker inside, PGlite
 * in DATA_DIR), and the whole of it is SIGKILLed twice while a wave of sends is held by the
 * network (the Graph simulator holds each answer 150 ms after taking the send), then started
 * again on the same DATA_DIR. Clients keep sending all along; requests cut by a kill are
 * ignored (their message may or may not be stored; each one answered 201 must be).
 *
 * After a whole-process kill the network's status callbacks for the sends it took find the
 * service down: the simulator posts them again every 500 ms to the callback URL registered at
 * that moment, as the Cloud API retries an undelivered webhook (with backoff, for days) to the
 * app's configured URL. The restarted process listens on a new port, so the test registers its
 * URL again, as an operator's fixed URL would keep pointing at it. The retried `sent` callbacks
 * carry our message id (`biz_opaque_callback_data`) and settle the sends left in doubt
 * (core/messaging/settle.ts).
 *
 * Between kills the test opens the PGlite directory itself (the dead process's database must
 * open again) and checks that every send answered 201 was committed. Target: 0 duplicates at the
 * network, 0 lost, 0 PENDING, FAILED `send_in_doubt` only without evidence, one credit per sent
 * message, all settled within 45 s of the last kill.
 */
const CONTACTS = 60;
const PER_CONTACT = 3;
const TOTAL = CONTACTS * PER_CONTACT;
const KILLS = 2;
const CLIENTS = 4;
const METRICS_TOKEN = 'embedded-crash-metrics-token';

describe.skipIf(onPostgres)('official sends across whole-process crashes (embedded PGlite, one process)', () => {
  let sim: GraphSimulator;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    // Callbacks come late enough (400 ms) that a kill finds the wave's sends unrecorded, and come again until taken.
    sim = await startGraphSimulator({ sendLatencyMs: 150, statusCallbacks: { upTo: 'delivered', delayMs: 400, retry: { everyMs: 500, forMs: 120_000 } } });
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    await server?.kill();
    await sim?.stop();
  }, HOOK_TIMEOUT);
  const installation = useInstallation('switchboard-embedded-crash-');

  test(
    `${TOTAL} sends, the one process SIGKILLed ${KILLS} times mid-batch: no duplicate, none lost, none PENDING, one credit each`,
    async () => {
      const token = installation.bootstrapOwner('crash@example.com', 'Crash');
      const start = async () => {
        server = await installation.startServer({ METRICS_TOKEN, CLOUD_API_BASE_URL: sim.baseUrl });
        if (connectionId) sim.callbackUrl = `${server.url}/v3/webhooks/whatsapp/${connectionId}`;
      };
      let connectionId = '';
      await start();
      const call = (method: string, path: string, body?: unknown) => callProcess(server!, token, method, path, body);

      const created = await call('POST', '/v3/connections', { name: 'official', driver: 'cloud-api', credentials: cloudApiCredentials(sim) });
      expect(created.status).toBe(201);
      connectionId = created.body.id;
      sim.callbackUrl = `${server!.url}/v3/webhooks/whatsapp/${connectionId}`;
      await call('POST', `/v3/connections/${connectionId}/connect`);
      await waitFor(async () => ((await call('GET', `/v3/connections/${connectionId}`)).body.status === 'CONNECTED' ? true : undefined), { what: 'the connection to open', timeout: 30_000 });
      const available = async () => (await call('GET', '/v3/summary')).body.messages.available as number;
      const creditsBefore = await available();

      // Each contact writes first: free text is inside the 24-hour window (spec 3.4).
      const contacts = Array.from({ length: CONTACTS }, (_, i) => `4477007${String(10_000 + i)}`);
      for (const from of contacts) expect((await sim.deliverIncoming(sim.callbackUrl, { from, type: 'text', text: { body: 'hello' } })).status).toBe(200);

      // Clients send all along; while the service is down they wait for it (`gate`).
      const accepted: string[] = [];
      const refused: string[] = [];
      let cut = 0;
      let next = 0;
      let gate: Promise<void> = Promise.resolve();
      const client = async () => {
        while (next < TOTAL) {
          await gate;
          const i = next++;
          const to = contacts[i % CONTACTS]!;
          try {
            const res = await call('POST', `/v3/connections/${connectionId}/chats/messages`, { to: `+${to}`, text: `message ${Math.floor(i / CONTACTS)} to ${to}` });
            if (res.status === 201) accepted.push(res.body.id);
            else refused.push(`${res.status} ${JSON.stringify(res.body)}`);
          } catch {
            cut += 1; // cut by the kill: stored or not, the client does not know
          }
        }
      };
      const clients = Promise.all(Array.from({ length: CLIENTS }, client));

      const inDoubtAtKills: number[] = [];
      let lastKill = 0;
      for (let kill = 0; kill < KILLS; kill += 1) {
        await waitFor(() => (accepted.length >= ((kill + 1) * TOTAL) / (KILLS + 1) ? true : undefined), { what: `${((kill + 1) * TOTAL) / (KILLS + 1)} sends accepted`, timeout: 60_000, interval: 5 });
        await midBatch(sim);
        let reopen!: () => void;
        gate = new Promise((resolve) => (reopen = resolve));
        await server!.kill();
        lastKill = Date.now();
        // The dead process's database opens again, and holds every send it answered 201 for.
        const taken = [...sim.sendsByOpaque().keys()];
        const rows = await readDatabase(installation.dataDir(), (db) =>
          db.query<{ id: string; status: string }>(`select id, status from messages where direction = 'outbound' and connection_id = $1`, [connectionId]),
        );
        const stored = new Map(rows.rows.map((r) => [r.id, r.status]));
        expect(accepted.filter((id) => !stored.has(id))).toEqual([]);
        inDoubtAtKills.push(taken.filter((id) => stored.get(id) === 'PENDING').length);
        await start();
        reopen();
      }
      await clients;
      // Without settlement these would all have been sent again after the restart.
      expect(Math.max(...inDoubtAtKills)).toBeGreaterThan(0);
      expect(refused).toEqual([]);

      await waitFor(
        async () => {
          const response = await fetch(`${server!.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
          const inProgress = parseExposition(await response.text()).samples.filter((s) => s.name === 'switchboard_sends_in_progress');
          return inProgress.every((s) => s.value === 0) ? true : undefined;
        },
        { what: 'every send settled after the kills', timeout: 60_000, interval: 250 },
      );
      const settledInSeconds = Math.round((Date.now() - lastKill) / 1000);
      // Every callback the network posted was taken in the end; some only on a retry (the service was down).
      await waitFor(() => (sim.statuses.every((s) => s.answer === 200) ? true : undefined), { what: 'every status callback taken', timeout: 30_000, interval: 100 });
      const retried = sim.statuses.filter((s) => (s.attempts ?? 1) > 1).length;
      const creditsAfter = await available();
      await server!.stop();

      const { messages, credits } = await readDatabase(installation.dataDir(), async (db) => ({
        messages: (
          await db.query<{ id: string; status: string; error_code: string | null; send_state: string | null; external_id: string | null }>(
            `select id, status, error->>'code' as error_code, send_state, external_id from messages where direction = 'outbound' and connection_id = $1`,
            [connectionId],
          )
        ).rows,
        // Sends accepted together share one reservation: the credits are summed per reservation.
        credits: (
          await db.query<{ amount: number; consumed: number; refunded: number }>(
            `select coalesce(sum(r.amount), 0)::int as amount, coalesce(sum(r.consumed), 0)::int as consumed, coalesce(sum(r.refunded), 0)::int as refunded
               from credit_reservations r
              where r.id in (select reservation_id from messages where direction = 'outbound' and connection_id = $1)`,
            [connectionId],
          )
        ).rows[0]!,
      }));
      const byStatus = Object.fromEntries(['SENT', 'DELIVERED', 'READ', 'FAILED'].map((s) => [s, messages.filter((m) => m.status === s).length]));
      console.log(
        `accepted ${accepted.length}, cut ${cut}, stored ${messages.length} (${JSON.stringify(byStatus)}); in doubt at the kills: ${inDoubtAtKills.join(', ')}; ` +
          `status callbacks posted again: ${retried}; all settled ${settledInSeconds} s after the last kill`,
      );
      expect(settledInSeconds).toBeLessThanOrEqual(45);
      expect(retried).toBeGreaterThan(0);

      // Nothing lost: every 201 stored; the only others are sends whose answer the kill cut.
      const stored = new Set(messages.map((m) => m.id));
      expect(accepted.filter((id) => !stored.has(id))).toEqual([]);
      expect(messages.length).toBeLessThanOrEqual(accepted.length + cut);
      // Nothing PENDING, nothing left in the send queue.
      expect(messages.filter((m) => m.status === 'PENDING' || m.send_state !== null)).toEqual([]);

      // 0 duplicates, counted at the network; every network send is one of our messages.
      const counts = sim.sendsByOpaque();
      expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
      expect([...counts.keys()].filter((id) => !stored.has(id))).toEqual([]);
      // Taken by the network: sent, with the network id of its one send. Not taken: FAILED in doubt.
      const wamidOf = new Map(sim.sent.map((m) => [m.body.biz_opaque_callback_data as string, m.id]));
      const sent = messages.filter((m) => counts.has(m.id));
      expect(sent.filter((m) => !['SENT', 'DELIVERED', 'READ'].includes(m.status) || wamidOf.get(m.id) !== m.external_id)).toEqual([]);
      expect(messages.filter((m) => !counts.has(m.id)).filter((m) => m.status !== 'FAILED' || m.error_code !== 'send_in_doubt')).toEqual([]);

      // One credit per sent message (spec 3.6); a send given up in doubt has its credit back.
      expect(credits).toEqual({ amount: messages.length, consumed: sent.length, refunded: messages.length - sent.length });
      expect(creditsAfter).toBe(creditsBefore - sent.length);
    },
    120_000,
  );
});

/** Opens the installation's PGlite directory in the test (no service holds it), reads, closes. */
async function readDatabase<T>(dataDir: string, read: (db: PGlite) => Promise<T>): Promise<T> {
  const db = await PGlite.create(dataDir);
  try {
    return await read(db);
  } finally {
    await db.close();
  }
}
