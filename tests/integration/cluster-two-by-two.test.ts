import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import pg from 'pg';
import { startCluster, type Cluster } from '../support/cluster.ts';
import { answerInvitation, TEST_MEMBER_PASSWORD } from '../support/invitations.ts';
import { HOOK_TIMEOUT, onPostgres } from '../support/service.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import { waitFor } from '../support/wait.ts';
import { startReceiver, type Hit } from '../support/webhook-receiver.ts';

/**
 * Scale-out, proven: two server processes and two worker processes on one Postgres database,
 * every client request through a round-robin TCP proxy (tests/support/round-robin-proxy.ts), so
 * consecutive requests and websockets land on different servers. Sends, webhooks, a campaign and
 * the helpdesk's realtime events work across them; then one server and one worker are SIGKILLed
 * while sends and a campaign are under way, and nothing accepted is lost.
 *
 * The proxy skips a backend that refuses connections (as a load balancer retrying on a connect
 * error does); a request in flight on the killed server is cut. Such a send's outcome is unknown
 * to its caller (no answer), so it is counted apart: it may exist, at most once. Webhook delivery
 * is at least once (spec 6.4: receivers deduplicate on `data.key.id`): a delivery the dead worker
 * had on the wire may come again, with the same delivery id; without kills each comes once.
 */
const PHASE_ONE_SENDS = 30;
const INBOUND = 10;
const RECIPIENTS = 16;

describe.skipIf(!onPostgres)('two servers and two workers behind a round-robin proxy (Postgres only; skipped on the embedded PGlite, which is one process)', () => {
  let cluster: Cluster;
  const receiver = startReceiver();
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    cluster = await startCluster(process.env.TEST_DATABASE_URL!, { servers: 2, workers: 2 });
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    receiver.stop();
    await cluster?.stop();
  }, HOOK_TIMEOUT);

  /** One request through the proxy on a connection of its own (so the proxy spreads them); throws when the connection is cut. */
  async function request(method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; anonymous?: boolean } = {}): Promise<{ status: number; body: any }> {
    const response = await fetch(`${cluster.url}${path}`, {
      method,
      keepalive: false,
      headers: {
        connection: 'close',
        ...(!options.anonymous && { apikey: cluster.owner.token }),
        ...(options.body !== undefined && { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  /** A read, tried again if its connection was cut (a read is safe to repeat). */
  async function read(path: string): Promise<any> {
    for (let attempt = 0; ; attempt += 1) {
      let res: { status: number; body: any };
      try {
        res = await request('GET', path);
      } catch (error) {
        if (attempt >= 5) throw error;
        continue;
      }
      expect(res.status).toBe(200);
      return res.body;
    }
  }

  async function created(method: string, path: string, body?: unknown): Promise<any> {
    const res = await request(method, path, { body });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  const sendTo = (i: number) => `+55119${String(7_000_000 + i)}`;

  test('sends, webhooks, a campaign and helpdesk realtime work across the servers, and survive a server and a worker killed mid-load', async () => {
    const { owner } = cluster;
    const connection = await created('POST', '/v3/connections', { name: 'cluster line' });
    await created('POST', `/v3/connections/${connection.id}/connect`);
    await waitFor(async () => ((await read(`/v3/connections/${connection.id}`)).status === 'CONNECTED' ? true : undefined), { what: 'the connection to open' });
    const webhook = await created('POST', '/v3/webhooks', { url: receiver.url('/events'), events: ['send.message', 'messages.upsert'], connections: [connection.id], hmacEnabled: true });
    const { secret } = await read(`/v3/webhooks/${webhook.id}/secret`);

    // ---- Phase one: every process alive. ----
    const accepted: string[] = [];
    for (let i = 0; i < PHASE_ONE_SENDS; i += 1) accepted.push((await created('POST', `/v3/connections/${connection.id}/chats/messages`, { to: sendTo(i), text: `hello ${i}` })).id);
    const injected: string[] = [];
    for (let i = 0; i < INBOUND; i += 1) injected.push((await created('POST', `/v3/connections/${connection.id}/sandbox/messages`, { from: `5511966${String(100_000 + i)}`, text: `inbound ${i}` })).externalId);
    // The requests were spread: each server answered a share of them.
    const [first, second] = cluster.servers;
    const spread = cluster.proxy.forwarded();
    expect(spread.get(first!.port!)).toBeGreaterThan(PHASE_ONE_SENDS / 2 - 5);
    expect(Math.abs(spread.get(first!.port!)! - spread.get(second!.port!)!)).toBeLessThanOrEqual(1);

    const externalOf = await sentOnce(connection.id, accepted);
    await eventsOnce(secret, [...accepted.map((id) => externalOf.get(id)!), ...injected], { exactlyOnce: true });

    // Helpdesk: the owner's socket and an Agent's (signed in with a session, as the console is) on different servers.
    const inbox = await created('POST', '/v3/helpdesk/inboxes', { name: 'API', channelType: 'API' });
    const agent = await invitedAgent();
    expect((await request('PUT', `/v3/helpdesk/inboxes/${inbox.id}/members`, { body: { userIds: [agent.userId] } })).status).toBe(200);
    const ownerSocket = await socketOn(first!.port!, () => connectHelpdesk(cluster.url, owner.token, { transports: ['websocket'] }));
    const agentSocket = await socketOn(second!.port!, () => connectHelpdesk(cluster.url, undefined, { transports: ['websocket'], extraHeaders: agent.headers }));
    await bothListening(inbox, ownerSocket, agentSocket);
    await realtimeBothWays(inbox, agent, ownerSocket, agentSocket);

    // ---- Phase two: load, then a server and a worker SIGKILLed in the middle of it. ----
    const numbers = Array.from({ length: RECIPIENTS }, (_, i) => `+3361${String(3_000_000 + i)}`);
    const campaign = await created('POST', '/v3/campaigns', {
      name: 'Cluster',
      connectionId: connection.id,
      message: { text: 'Sent once, whatever happens' },
      audience: { numbers },
      pace: { messagesPerMinute: 120, jitterSeconds: 0 },
    });
    const unknown: number[] = [];
    let loading = true;
    let next = 1000;
    const load = async () => {
      while (loading) {
        const i = next++;
        let res: { status: number; body: any };
        try {
          res = await request('POST', `/v3/connections/${connection.id}/chats/messages`, { body: { to: sendTo(i), text: `under load ${i}` } });
        } catch {
          // Cut on the killed server: no answer, so the caller does not know whether it was taken.
          unknown.push(i);
          continue;
        }
        expect(res.status).toBe(201);
        accepted.push(res.body.id);
      }
    };
    const loaders = [load(), load(), load()];
    await waitFor(async () => ((await read(`/v3/campaigns/${campaign.id}`)).progress.sent >= 3 ? true : undefined), { what: 'the campaign to be sending', timeout: 30_000, interval: 200 });
    await Promise.all([cluster.kill(first!), cluster.kill(cluster.workers[0]!)]);
    const killedAt = Date.now();
    const before = accepted.length;
    // The survivors keep taking sends through the same address.
    await waitFor(() => (accepted.length >= before + 30 ? true : undefined), { what: 'sends accepted after the kill', timeout: 20_000 });
    loading = false;
    await Promise.all(loaders);
    console.log(`[cluster] ${accepted.length} sends accepted, ${unknown.length} cut by the kill`);

    // The owner's socket was on the killed server: it connects again through the proxy (to the survivor) and still hears the agent.
    expect(ownerSocket.socket.connected).toBe(false);
    const reconnected = await connectHelpdesk(cluster.url, owner.token, { transports: ['websocket'] });
    sockets.push(reconnected);
    expect(cluster.proxy.lastBackend()).toBe(second!.port!);
    await realtimeBothWays(inbox, agent, reconnected, agentSocket);

    // ---- Nothing lost. ----
    const done = await waitFor(
      async () => {
        const c = await read(`/v3/campaigns/${campaign.id}`);
        return c.status === 'COMPLETED' ? c : undefined;
      },
      { what: 'the campaign to complete', timeout: 60_000, interval: 250 },
    );
    expect(done.progress).toMatchObject({ total: RECIPIENTS, sent: RECIPIENTS, failed: 0, queued: 0 });
    expect(done.credits).toEqual({ reserved: RECIPIENTS, consumed: RECIPIENTS, refunded: 0, held: 0 });
    const recipients = (await read(`/v3/campaigns/${campaign.id}/recipients?per_page=100`)).data;
    expect(new Set(recipients.map((r: any) => r.messageId)).size).toBe(RECIPIENTS);

    const allExternal = await sentOnce(connection.id, accepted);
    const campaignExternal = await sentOnce(connection.id, recipients.map((r: any) => r.messageId));
    await eventsOnce(secret, [...allExternal.values(), ...campaignExternal.values(), ...injected], { exactlyOnce: false });
    // A send cut by the kill exists at most once: every outbound message is an accepted one, a campaign's, or one of those.
    console.log(`[cluster] everything settled ${Math.round((Date.now() - killedAt) / 1000)} s after the kill (a dead worker's webhook deliveries wait for their 30 s lease)`);
    const outbound = await outboundPerChat(connection.id);
    const total = [...outbound.values()].reduce((sum, n) => sum + n, 0);
    expect(total).toBeGreaterThanOrEqual(accepted.length + RECIPIENTS);
    expect(total).toBeLessThanOrEqual(accepted.length + RECIPIENTS + unknown.length);
    // Each campaign recipient's chat holds exactly one message.
    expect(numbers.map((n) => outbound.get(`${n.slice(1)}@s.whatsapp.net`))).toEqual(numbers.map(() => 1));
  }, 120_000);

  /** Each message ends SENT (a sandbox send is settled at SENT); answers its network id. */
  async function sentOnce(connectionId: string, ids: string[]): Promise<Map<string, string>> {
    const external = new Map<string, string>();
    for (const id of ids) {
      const message = await waitFor(
        async () => {
          const m = await read(`/v3/connections/${connectionId}/chats/messages/${id}`);
          return m.status === 'PENDING' ? undefined : m;
        },
        { what: `message ${id} to be sent`, timeout: 45_000, interval: 200 },
      );
      expect(message.status).toBe('SENT');
      external.set(id, message.externalId);
    }
    expect(new Set(external.values()).size).toBe(ids.length);
    return external;
  }

  /** Every event (by `data.key.id`) reached the receiver, signed with the webhook's secret; `exactlyOnce`: one request each. */
  async function eventsOnce(secret: string, keys: string[], { exactlyOnce }: { exactlyOnce: boolean }): Promise<void> {
    const byKey = () => {
      const map = new Map<string, Hit[]>();
      for (const hit of receiver.hits('/events')) map.set(hit.json.data.key.id, [...(map.get(hit.json.data.key.id) ?? []), hit]);
      return map;
    };
    await waitFor(() => (keys.every((k) => byKey().has(k)) ? true : undefined), {
      what: () => `${keys.filter((k) => !byKey().has(k)).length} of ${keys.length} events to be delivered`,
      timeout: 60_000,
      interval: 200,
    });
    const hits = byKey();
    for (const key of keys) {
      const copies = hits.get(key)!;
      if (exactlyOnce) expect(copies).toHaveLength(1);
      // A repeat is the same delivery (a receiver deduplicates it).
      expect(new Set(copies.map((h) => h.headers.get('x-switchboard-delivery'))).size).toBe(1);
      for (const hit of copies) {
        const ts = hit.headers.get('x-switchboard-timestamp');
        expect(hit.headers.get('x-switchboard-signature-256')).toBe('sha256=' + createHmac('sha256', secret).update(`${ts}.`).update(hit.raw).digest('hex'));
      }
    }
    const repeats = keys.filter((k) => hits.get(k)!.length > 1).length;
    if (!exactlyOnce) console.log(`[cluster] ${keys.length} events delivered, ${repeats} of them twice (at least once: a delivery on the wire of the killed worker)`);
  }

  /** The connection's outbound message rows per chat, counted in the database itself. */
  async function outboundPerChat(connectionId: string): Promise<Map<string, number>> {
    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`select remote_jid, count(*)::int as n from messages where direction = 'outbound' and connection_id = $1 group by 1`, [connectionId]);
      return new Map(rows.map((r) => [r.remote_jid, r.n]));
    } finally {
      await db.end();
    }
  }

  /** Connects until the socket lands on the server at `port` (the proxy alternates, other requests may come between). */
  async function socketOn(port: number, connect: () => Promise<TestSocket>): Promise<TestSocket> {
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const socket = await connect();
      if (cluster.proxy.lastBackend() === port) {
        sockets.push(socket);
        return socket;
      }
      socket.close();
    }
    throw new Error(`no socket landed on port ${port}`);
  }

  /** An Agent invited over the API, signed in by accepting the invitation: the session's headers, as the console sends them. */
  async function invitedAgent(): Promise<{ userId: string; headers: Record<string, string>; csrf: string }> {
    const email = `agent-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const invitation = await created('POST', '/v3/members', { email, roles: ['AGENT'] });
    const accepted = await answerInvitation(cluster.url, invitation.invitationUrl, { password: TEST_MEMBER_PASSWORD });
    expect(accepted.status).toBe(200);
    const cookie = accepted.cookies.find((c) => /sb_session=[^;]/.test(c))!.split(';')[0]!;
    const headers = { cookie, origin: cluster.url, 'x-account-id': cluster.owner.workspaceId };
    const session = await request('GET', '/v3/session', { headers, anonymous: true });
    expect(session.status).toBe(200);
    return { userId: session.body.user.userId, headers, csrf: session.body.csrfToken };
  }

  /**
   * Each server's Socket.IO adapter starts listening in the background (and may wait for a
   * connection on a busy database): a change is made until both sockets have heard one.
   */
  async function bothListening(inbox: any, ...sockets: TestSocket[]): Promise<void> {
    const conversation = await newConversation(inbox);
    const priorities = ['LOW', 'MEDIUM', 'HIGH', 'URGENT'];
    const deadline = Date.now() + 30_000;
    for (let i = 0; ; i += 1) {
      const priority = priorities[i % priorities.length]!;
      const heard = sockets.map((s) => s.next('helpdesk.conversation.priority_changed', (p) => p.conversationId === conversation && p.toPriority === priority, { timeoutMs: 1_000, after: s.received.length }));
      expect((await request('PATCH', `/v3/helpdesk/conversations/${conversation}`, { body: { priority } })).status).toBe(200);
      try {
        await Promise.all(heard);
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
    }
  }

  /** A conversation opened by a contact writing to the API inbox; answers its id. */
  async function newConversation(inbox: any): Promise<string> {
    const inbound = await request('POST', `/webhooks/helpdesk/${inbox.id}`, {
      headers: { 'x-helpdesk-token': inbox.inboundWebhookSecret },
      anonymous: true,
      body: { sourceId: crypto.randomUUID(), content: 'Where is my order?', sender: { name: 'Lia', email: `lia-${crypto.randomUUID().slice(0, 8)}@example.com` } },
    });
    expect(inbound.status).toBe(201);
    return inbound.body.conversationId;
  }

  /**
   * The owner (API token) assigns a new conversation to the agent: the agent's socket hears it.
   * The agent writes a note (session and CSRF token, as the console does): the owner's socket hears it.
   */
  async function realtimeBothWays(inbox: any, agent: { userId: string; headers: Record<string, string>; csrf: string }, ownerSocket: TestSocket, agentSocket: TestSocket): Promise<void> {
    const conversationId = await newConversation(inbox);
    expect(await ownerSocket.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });

    // Generous: on a busy 2-core machine the hop (a worker's event runner, NOTIFY, the other server) can take seconds.
    const timeoutMs = 30_000;
    let since = Date.now();
    const assigned = agentSocket.next('helpdesk.conversation.assignee_changed', (p) => p.conversationId === conversationId && p.toAssigneeUserId === agent.userId, { timeoutMs });
    expect((await request('PATCH', `/v3/helpdesk/conversations/${conversationId}`, { body: { assigneeUserId: agent.userId } })).status).toBe(200);
    await assigned;
    const assignedIn = Date.now() - since;

    since = Date.now();
    const reply = ownerSocket.next('helpdesk.message.created', (p) => p.conversationId === conversationId && p.message?.content === 'On its way', { timeoutMs });
    const res = await request('POST', `/v3/helpdesk/conversations/${conversationId}/messages`, { body: { content: 'On its way', private: true }, headers: { ...agent.headers, 'x-csrf-token': agent.csrf }, anonymous: true });
    expect(res.status).toBe(201);
    await reply;
    console.log(`[cluster] across servers: the assignment reached the agent in ${assignedIn} ms, the note the owner in ${Date.now() - since} ms`);
  }
});
