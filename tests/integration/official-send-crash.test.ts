import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type pg from 'pg';
import type { GraphSimulator } from '../support/graph-simulator.ts';
import { midBatch } from '../support/mid-batch.ts';
import { apiOf, createOfficialConnection, openOfficialLayout, type ApiCall, type OfficialLayout, type ServiceChild } from '../support/official-layout.ts';
import { HOOK_TIMEOUT, onPostgres } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';

/**
 * Issue 24 ("never twice", "recovered in seconds"): a worker that dies while its sends are on
 * the wire must not have them sent again, and its sends must be taken over within seconds.
 * The message rows are the send queue (core/messaging/send-record.ts): each send is claimed under
 * a 12 s lease and marked in flight right before its network call. When the worker dies, its
 * sends never started go back to the queue as its lease lapses; those in flight are in doubt and
 * are settled by the platform's own evidence: every Cloud API send carries our message id as
 * `biz_opaque_callback_data`, the `statuses[]` callbacks hand it back, and a callback naming a
 * network id we never recorded settles the message (core/messaging/settle.ts).
 *
 * Production layout on Postgres: the HTTP server (`--no-worker`, it keeps receiving the
 * platform's callbacks) and a separate worker, which is SIGKILLed twice mid-batch (the Graph
 * simulator holds every answer 150 ms after taking the send; the kill comes 75 ms after a wave
 * of sends began to arrive, so the network holds the batch and the worker has no answer) and
 * started again. A send killed between its in-flight mark and its request leaving the process
 * would be in doubt with no evidence and end FAILED `send_in_doubt` (never resent): the
 * property test covers that path. Target: 0 duplicates at the network, 0 lost, 0 PENDING, all
 * settled within 45 s of the last kill.
 */
const CONTACTS = 60;
const PER_CONTACT = 5;
const TOTAL = CONTACTS * PER_CONTACT;
const KILLS = 2;
/** Network calls a worker makes at once on one connection (core/messaging/deliver.ts): the most a kill can catch between mark and wire. */
const CALLS_AT_ONCE = 32;
const CAMPAIGN = 300;

describe.skipIf(!onPostgres)('official sends across worker crashes (Postgres, server and worker processes)', () => {
  let layout: OfficialLayout;
  let sim: GraphSimulator;
  let db: pg.Client;
  /** What the first test leaves for the second: the API of the running server, the line, the worker. */
  let api: ApiCall;
  let connectionId: string;
  let worker: ServiceChild;

  beforeAll(async () => {
    // Callbacks come late enough that the kill finds the batch's sends still PENDING (in doubt).
    layout = await openOfficialLayout('official-crash', { sendLatencyMs: 150, statusCallbacks: { upTo: 'delivered', delayMs: 400 } });
    ({ sim, db } = layout);
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    await layout?.close();
  }, HOOK_TIMEOUT);

  test(
    `${TOTAL} direct sends, the worker SIGKILLed ${KILLS} times mid-batch: no duplicate, none lost, none PENDING, one credit each`,
    async () => {
      const token = layout.bootstrap('crash@example.com', 'Crash');
      const server = await layout.spawnServer();
      const url = server.match[1]!;
      api = apiOf(url, token);
      connectionId = await createOfficialConnection(api, sim);
      sim.callbackUrl = `${url}/v3/webhooks/whatsapp/${connectionId}`;
      // The worker opens the session (credentials checked against the platform), then stops.
      const opener = await spawnWorker();
      await api('POST', `/v3/connections/${connectionId}/connect`);
      await waitFor(async () => ((await api('GET', `/v3/connections/${connectionId}`)).body.status === 'CONNECTED' ? true : undefined), { what: 'the connection to open', timeout: 30_000 });
      opener.process.kill('SIGTERM');
      await opener.process.exited;
      const available = async () => (await api('GET', '/v3/summary')).body.messages.available as number;
      const creditsBefore = await available();

      // Each contact writes first: free text is inside the 24-hour window (spec 3.4).
      const contacts = Array.from({ length: CONTACTS }, (_, i) => `4477009${String(10_000 + i)}`);
      for (const from of contacts) expect((await sim.deliverIncoming(sim.callbackUrl, { from, type: 'text', text: { body: 'hello' } })).status).toBe(200);

      // All accepted first, the worker not yet running: each worker fetches full batches at once.
      const ids: string[] = [];
      for (let round = 0; round < PER_CONTACT; round += 1) {
        for (const contact of contacts) {
          const res = await api('POST', `/v3/connections/${connectionId}/chats/messages`, { to: `+${contact}`, text: `message ${round} to ${contact}` });
          expect(res.status).toBe(201);
          ids.push(res.body.id);
        }
      }

      worker = await spawnWorker();
      const inDoubtAtKills: number[] = [];
      for (let kill = 0; kill < KILLS; kill += 1) {
        // Mid-batch: sends the simulator has just taken, whose answers (held 150 ms) are not back yet.
        await midBatch(sim);
        worker.process.kill('SIGKILL');
        await worker.process.exited;
        const taken = [...sim.sendsByOpaque().keys()];
        const pending = await db.query<{ id: string }>(`select id from messages where status = 'PENDING' and id = any($1::uuid[])`, [taken]);
        inDoubtAtKills.push(pending.rowCount ?? 0);
        worker = await spawnWorker();
      }
      // Without settlement these would all have been sent again by the next worker.
      expect(Math.max(...inDoubtAtKills)).toBeGreaterThan(0);

      const lastKill = Date.now();
      await waitFor(
        async () => {
          const left = await db.query(`select count(*)::int as n from messages where direction = 'outbound' and status = 'PENDING' and connection_id = $1`, [connectionId]);
          return left.rows[0].n === 0 ? true : undefined;
        },
        { what: 'every send settled after the kills', timeout: 120_000, interval: 500 },
      );
      const recoveredInSeconds = Math.round((Date.now() - lastKill) / 1000);
      console.log(`in doubt at the kills: ${inDoubtAtKills.join(', ')}; all settled ${recoveredInSeconds} s after the last kill`);
      expect(recoveredInSeconds).toBeLessThanOrEqual(45);
      // The queue is empty: nothing claimed, in flight or in doubt is left behind.
      const queued = await db.query(`select count(*)::int as n from messages where send_state is not null and connection_id = $1`, [connectionId]);
      expect(queued.rows[0].n).toBe(0);

      // 0 duplicates and 0 lost, counted at the network: each of our messages taken at most once.
      // A send killed in the instant between its in-flight mark and its request leaving the process
      // has no evidence: it ends FAILED `send_in_doubt` and is never sent again (docs/connections.md,
      // "Delivery guarantee"; the property test covers that path). Nothing else may fail.
      const counts = sim.sendsByOpaque();
      expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
      const inDoubt = await failedInDoubt(ids);
      expect(inDoubt.filter((id) => counts.has(id))).toEqual([]);
      expect(inDoubt.length).toBeLessThanOrEqual(KILLS * CALLS_AT_ONCE);
      const sent = ids.filter((id) => !inDoubt.includes(id));
      expect(sent.every((id) => counts.get(id) === 1)).toBe(true);
      expect(sim.sent.length).toBe(sent.length);

      const rows = await db.query<{ status: string; n: number }>(`select status, count(*)::int as n from messages where id = any($1::uuid[]) group by status`, [sent]);
      expect(rows.rows.reduce((sum, r) => sum + r.n, 0)).toBe(sent.length);
      expect(rows.rows.every((r) => r.status === 'SENT' || r.status === 'DELIVERED')).toBe(true);
      // Each message's network id is the one the simulator gave its one send.
      const external = await db.query<{ id: string; external_id: string }>(`select id, external_id from messages where id = any($1::uuid[])`, [sent]);
      const wamidOf = new Map(sim.sent.map((m) => [m.body.biz_opaque_callback_data as string, m.id]));
      expect(external.rows.every((r) => wamidOf.get(r.id) === r.external_id)).toBe(true);
      // One credit per message sent, consumed once (spec 3.6); a failed one's credit went back.
      // Sends accepted together share one reservation: the credits are summed per reservation.
      const credits = await db.query<{ consumed: number; reserved: number }>(
        `select coalesce(sum(r.consumed), 0)::int as consumed, coalesce(sum(r.amount), 0)::int as reserved from credit_reservations r where r.id in (select reservation_id from messages where id = any($1::uuid[]))`,
        [ids],
      );
      expect(credits.rows[0]).toEqual({ consumed: sent.length, reserved: TOTAL });
      expect(await available()).toBe(creditsBefore - sent.length);
    },
    600_000,
  );

  test(
    `an unpaced campaign of ${CAMPAIGN}, the worker SIGKILLed ${KILLS} times mid-batch: every recipient sent exactly once`,
    async () => {
      const numbers = Array.from({ length: CAMPAIGN }, (_, i) => `4477008${String(10_000 + i)}`);
      for (const from of numbers) expect((await sim.deliverIncoming(sim.callbackUrl!, { from, type: 'text', text: { body: 'hi' } })).status).toBe(200);
      const sentBefore = sim.sent.length;
      const created = await api('POST', '/v3/campaigns', {
        name: 'Crash campaign',
        connectionId,
        message: { text: 'Sent once, whatever happens' },
        audience: { numbers: numbers.map((n) => `+${n}`) },
        pace: { messagesPerMinute: null },
      });
      expect(created.status).toBe(201);
      for (let kill = 0; kill < KILLS; kill += 1) {
        await midBatch(sim, 'a batch of the campaign on the wire');
        worker.process.kill('SIGKILL');
        await worker.process.exited;
        worker = await spawnWorker();
      }
      const lastKill = Date.now();
      const done = await waitFor(
        async () => {
          const campaign = (await api('GET', `/v3/campaigns/${created.body.id}`)).body;
          return campaign.status === 'COMPLETED' && campaign.progress.queued === 0 && campaign.progress.sent + campaign.progress.failed === CAMPAIGN ? campaign : undefined;
        },
        { what: 'the campaign to complete after the kills', timeout: 120_000, interval: 500 },
      );
      console.log(`campaign settled ${Math.round((Date.now() - lastKill) / 1000)} s after the last kill`);
      expect(Math.round((Date.now() - lastKill) / 1000)).toBeLessThanOrEqual(45);
      // As for direct sends: only a send killed between its in-flight mark and the wire may end
      // FAILED `send_in_doubt`, never reaching the network; nothing else fails.
      const campaignMessages = await db.query<{ id: string; remote_jid: string }>(`select id, remote_jid from messages where connection_id = $1 and direction = 'outbound' and remote_jid = any($2::text[])`, [connectionId, numbers.map((n) => `${n}@s.whatsapp.net`)]);
      const inDoubt = new Set(await failedInDoubt(campaignMessages.rows.map((m) => m.id)));
      expect(inDoubt.size).toBeLessThanOrEqual(KILLS * CALLS_AT_ONCE);
      const doubtedNumbers = new Set(campaignMessages.rows.filter((m) => inDoubt.has(m.id)).map((m) => m.remote_jid.split('@')[0]!));
      expect(done.progress).toMatchObject({ total: CAMPAIGN, failed: inDoubt.size });
      // Counted at the network: each recipient got exactly one message (none when its send ended in doubt).
      const perRecipient = new Map<string, number>();
      for (const m of sim.sent.slice(sentBefore)) perRecipient.set(m.body.to as string, (perRecipient.get(m.body.to as string) ?? 0) + 1);
      expect([...perRecipient.values()].filter((n) => n !== 1)).toEqual([]);
      expect(numbers.every((n) => perRecipient.get(n) === (doubtedNumbers.has(n) ? undefined : 1))).toBe(true);
      expect(done.credits).toMatchObject({ reserved: CAMPAIGN, consumed: CAMPAIGN - inDoubt.size, refunded: inDoubt.size, held: 0 });
    },
    600_000,
  );

  const spawnWorker = () => layout.spawnWorker();

  /** Of these messages, those FAILED `send_in_doubt`; any other failure fails the test. */
  async function failedInDoubt(ids: readonly string[]): Promise<string[]> {
    const failed = await db.query<{ id: string; code: string }>(`select id, error->>'code' as code from messages where status = 'FAILED' and id = any($1::uuid[])`, [ids]);
    expect(failed.rows.filter((r) => r.code !== 'send_in_doubt')).toEqual([]);
    return failed.rows.map((r) => r.id);
  }
});
