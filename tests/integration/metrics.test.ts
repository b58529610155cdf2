import { beforeAll, describe, expect, test } from 'bun:test';
import { createHttpApp } from '../../adapters/http/app.ts';
import { ConfigError, loadConfig } from '../../apps/config.ts';
import { useOwner, useTestService, startTestService, onPostgres, HOOK_TIMEOUT } from '../support/service.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import { messageSettled, waitFor } from '../support/wait.ts';
import { connectHelpdesk } from '../support/socket.ts';
import { parseExposition, sample, type Exposition } from '../support/prometheus-text.ts';

/**
 * `GET /metrics` (docs/operations.md): the Prometheus text format, opened on the public port by
 * `METRICS_TOKEN` and served without one on `METRICS_PORT`. A send, an inbound message and a
 * webhook delivery go through the real service; the scrapes before and after are parsed
 * strictly and the numbers must have moved by what happened.
 */
const TOKEN = 'metrics-test-token-0123456789abcdef';
const receiver = useReceiver();
const service = useTestService({ env: { METRICS_TOKEN: TOKEN, METRICS_PORT: '0', HOST: '127.0.0.1', DATABASE_POOL_SIZE: '7' } });
const owner = useOwner(service, { plan: 'PRO' });

const scrape = async (): Promise<Exposition> => {
  const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toStartWith('text/plain; version=0.0.4');
  return parseExposition(await res.text());
};

describe('access', () => {
  test('the public port asks for the token: none, another scheme or a wrong one is 401 with a Bearer challenge', async () => {
    for (const authorization of [undefined, `Basic ${btoa(`x:${TOKEN}`)}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer']) {
      const res = await fetch(`${service.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="switchboard"');
      const body = await res.json();
      expect(body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(JSON.stringify(body)).not.toContain(TOKEN);
    }
    expect((await fetch(`${service.url}/metrics`, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
  });

  test('without METRICS_TOKEN the public route is 404, token or not', async () => {
    const ctx = service.runtime.ctx;
    const app = createHttpApp({ ...ctx, config: { ...ctx.config, metricsToken: undefined } }, service.runtime.plugins);
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }, { authorization: 'Bearer ' }] as Record<string, string>[]) {
      const res = await app.handle(new Request('http://localhost/metrics', { headers }));
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
    }
  });

  test('METRICS_PORT serves GET /metrics alone, without a token', async () => {
    const port = service.metricsPort!;
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(Number(new URL(service.url).port));
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(sample(parseExposition(await res.text()), 'switchboard_process_resident_memory_bytes')).toBeGreaterThan(0);
    const other = await fetch(`http://127.0.0.1:${port}/v3/accounts`);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ statusCode: 404 });
    const post = await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

test('a short METRICS_TOKEN or a METRICS_PORT that is not a port stops the start, without quoting the token', () => {
  expect(() => loadConfig({ METRICS_TOKEN: 'short-secret' })).toThrow(ConfigError);
  try {
    loadConfig({ METRICS_TOKEN: 'short-secret' });
  } catch (error) {
    expect((error as Error).message).toContain('METRICS_TOKEN');
    expect((error as Error).message).not.toContain('short-secret');
  }
  expect(() => loadConfig({ METRICS_TOKEN: 'has spaces in the middle of it' })).toThrow(ConfigError);
  expect(() => loadConfig({ METRICS_PORT: 'nine' })).toThrow('METRICS_PORT');
  expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow('METRICS_PORT');
  expect(loadConfig({}).metricsPort).toBeUndefined();
  expect(loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: TOKEN })).toMatchObject({ metricsPort: 9464, metricsToken: TOKEN });
});

test('a METRICS_PORT in use stops the start with a clear message', async () => {
  const taken = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('taken') });
  try {
    await expect(startTestService({ env: { METRICS_PORT: String(taken.port), HOST: '127.0.0.1' } })).rejects.toThrow(`METRICS_PORT ${taken.port} is in use`);
  } finally {
    taken.stop(true);
  }
}, HOOK_TIMEOUT);

describe('what the service did shows in the numbers', () => {
  let before: Exposition;
  let after: Exposition;
  let connectionId: string;

  beforeAll(async () => {
    const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'metrics' } });
    connectionId = created.body.id;
    expect((await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey: owner.token })).body.status).toBe('CONNECTED');
    const webhook = await service.call('POST', '/v3/webhooks', { apikey: owner.token, body: { url: receiver.url('/metrics-hook'), events: ['messages.upsert'], connections: [connectionId] } });
    expect(webhook.status).toBe(201);
    // Scheduled far ahead: its recipients wait (and send nothing meanwhile).
    const campaign = await service.call('POST', '/v3/campaigns', {
      apikey: owner.token,
      body: { name: 'Metrics', connectionId, message: { text: 'Hi' }, audience: { numbers: ['5511988880001', '5511988880002'] }, schedule: { startAt: '2099-06-01T09:00:00Z' } },
    });
    expect(campaign.body).toMatchObject({ status: 'SCHEDULED' });

    before = await scrape();

    const sent = await service.call('POST', `/v3/connections/${connectionId}/chats/messages`, { apikey: owner.token, body: { to: '5511999990001', text: 'hello' } });
    expect(sent.status).toBe(201);
    expect((await messageSettled(service, owner.token, connectionId, sent.body.id)).status).not.toBe('FAILED');
    const refused = await service.call('POST', `/v3/connections/${connectionId}/chats/messages`, { apikey: owner.token, body: { to: '5511999990001' } });
    expect(refused.status).toBe(400);
    expect((await service.call('GET', '/no-such-route-here')).status).toBe(404);
    const inbound = await service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, { apikey: owner.token, body: { from: '5511999990002', text: 'hi there' } });
    expect(inbound.status).toBe(201);
    // The same network message again is a replay: stored once, counted once.
    const replay = await service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, {
      apikey: owner.token,
      body: { from: '5511999990002', text: 'hi there', externalId: inbound.body.externalId },
    });
    expect(replay.body.id).toBe(inbound.body.id);
    await receiver.waitFor('/metrics-hook', 1);
    // An agent on the helpdesk's websocket: a socket of this process and a member shown online.
    const agent = await connectHelpdesk(service.url, owner.token);

    after = await waitFor(
      async () => {
        const now = await scrape();
        // The agent's presence is recorded just after the socket connects.
        return sample(now, 'switchboard_webhook_attempts_total', { outcome: 'success' }) > 0 && sample(now, 'switchboard_helpdesk_agents', { status: 'online' }) > 0 ? now : undefined;
      },
      { what: 'the webhook attempt counted and the agent shown online' },
    );
    agent.close();
  }, HOOK_TIMEOUT);

  const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);

  test('sends: accepted and sent by the sandbox driver, nothing failed', () => {
    expect(moved('switchboard_sends_total', { driver: 'sandbox', outcome: 'accepted' })).toBe(1);
    expect(moved('switchboard_sends_total', { driver: 'sandbox', outcome: 'sent' })).toBe(1);
    expect(moved('switchboard_sends_total', { driver: 'sandbox', outcome: 'failed' })).toBe(0);
  });

  test('one inbound message, the replay not counted again', () => {
    expect(moved('switchboard_inbound_messages_total', { driver: 'sandbox' })).toBe(1);
  });

  test('webhook attempts by outcome with their latency; the delivery queue and the plugin backlog are gauges', () => {
    expect(moved('switchboard_webhook_attempts_total', { outcome: 'success' })).toBeGreaterThanOrEqual(1);
    expect(moved('switchboard_webhook_attempt_duration_seconds_count', { outcome: 'success' })).toBe(moved('switchboard_webhook_attempts_total', { outcome: 'success' }));
    expect(sample(after, 'switchboard_webhook_attempt_duration_seconds_bucket', { outcome: 'success', le: '+Inf' })).toBe(sample(after, 'switchboard_webhook_attempts_total', { outcome: 'success' }));
    expect(after.types.get('switchboard_webhook_deliveries_queued')).toBe('gauge');
    expect(sample(after, 'switchboard_webhook_events_waiting')).toBeGreaterThanOrEqual(0);
    expect(sample(after, 'switchboard_plugin_events_waiting')).toBeGreaterThanOrEqual(0);
  });

  test('HTTP requests by route template (never the raw path) and the status answered, with durations', () => {
    const route = '/v3/connections/:id/chats/messages';
    expect(moved('switchboard_http_requests_total', { method: 'POST', route, status: '201' })).toBe(1);
    expect(moved('switchboard_http_requests_total', { method: 'POST', route, status: '400' })).toBe(1);
    expect(moved('switchboard_http_request_duration_seconds_count', { method: 'POST', route, status: '201' })).toBe(1);
    expect(moved('switchboard_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    for (const s of after.samples.filter((s) => s.name === 'switchboard_http_requests_total')) expect(s.labels.route).not.toContain(connectionId);
  });

  test('connections by driver and status, campaigns, agents and sockets are read when scraped', () => {
    expect(moved('switchboard_realtime_sockets', { namespace: '/helpdesk' })).toBe(1);
    expect(moved('switchboard_helpdesk_agents', { status: 'online' })).toBe(1);
    expect(sample(after, 'switchboard_connections', { driver: 'sandbox', status: 'CONNECTED' })).toBe(1);
    expect(sample(after, 'switchboard_campaigns', { status: 'SCHEDULED' })).toBe(1);
    expect(sample(after, 'switchboard_campaign_recipients_active', { status: 'QUEUED' })).toBe(2);
  });

  test('process memory and event-loop lag; the database pool on Postgres', () => {
    expect(sample(after, 'switchboard_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(after.types.get('switchboard_nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(sample(after, 'switchboard_nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    if (onPostgres) {
      expect(sample(after, 'switchboard_db_pool_max_connections')).toBe(7); // DATABASE_POOL_SIZE
      expect(sample(after, 'switchboard_db_pool_in_use', { kind: 'statement' })).toBeGreaterThanOrEqual(0);
      expect(after.types.get('switchboard_db_pool_waiting')).toBe('gauge');
    } else {
      expect(after.types.has('switchboard_db_pool_max_connections')).toBe(false);
    }
  });
});
