import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Kysely } from 'kysely';
import { useTestService, useOwner } from '../support/service.ts';
import { connectedConnection, connectionInbox, eventually } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 19, section 1 (outbound URL policy), through the HTTP API of a service started WITHOUT
 * `OUTBOUND_ALLOW`: "Every URL the service calls on a customer's behalf ... today accepts loopback,
 * `[::1]`, decimal/hex IPs (`http://2130706433/`), `169.254.169.254`, 10/8 and `*.internal`." Each
 * is "400 in the standard shape, naming the rule". URLs stored before the policy existed (written
 * to the database here) are refused again at connection time: a failed attempt, no request sent.
 */

let connectionId: string;
let inboxId: string;
let receiver: ReturnType<typeof Bun.serve>;
const hits: Request[] = [];
const receiverUrl = (path: string) => `http://127.0.0.1:${receiver.port}${path}`;
const db = () => service.runtime.ctx.db as unknown as Kysely<any>;

const REFUSED: [string, string][] = [
  ['http://127.0.0.1:8080/hook', '127.0.0.0/8 (loopback)'],
  ['http://[::1]:8080/hook', '::1/128 (loopback)'],
  ['http://2130706433/hook', '127.0.0.0/8 (loopback)'],
  ['http://169.254.169.254/latest/meta-data/', '169.254.0.0/16 (link-local, cloud metadata)'],
  ['http://10.0.0.1/hook', '10.0.0.0/8 (private network)'],
  ['http://metadata.google.internal/computeMetadata/v1/', '*.internal names'],
];

const service = useTestService({ env: { OUTBOUND_ALLOW: '' } });
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  connectionId = await connectedConnection(service, owner.token, 'outbound line');
  await connectionInbox(service, owner.token, 'Support', connectionId);
  const inbox = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: owner.token, body: { name: 'App', channelType: 'API', webhookUrl: 'https://hooks.example.com/in' } });
  expect(inbox.status).toBe(201);
  inboxId = inbox.body.id;
  receiver = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => (hits.push(request), new Response('{"ok":true}')) });
}, HOOK_TIMEOUT);

afterAll(async () => {
  receiver?.stop(true);
});

/** Every place a customer gives a URL the service will call, as one request each. */
const PLACES: { name: string; field: string; request: (url: string) => [string, string, unknown] }[] = [
  { name: 'connection webhook', field: 'body.url', request: (url) => ['POST', '/v3/webhooks', { url, events: ['messages.upsert'], connections: [connectionId] }] },
  { name: 'helpdesk webhook', field: 'body.url', request: (url) => ['POST', '/v3/helpdesk/webhooks', { url, subscriptions: ['helpdesk.label.created'] }] },
  { name: 'API-channel inbox', field: 'body.webhookUrl', request: (url) => ['POST', '/v3/helpdesk/inboxes', { name: 'Refused', channelType: 'API', webhookUrl: url }] },
  { name: 'API-channel inbox update', field: 'body.webhookUrl', request: (url) => ['PATCH', `/v3/helpdesk/inboxes/${inboxId}`, { webhookUrl: url }] },
  { name: 'agent bot', field: 'body.webhookUrl', request: (url) => ['POST', '/v3/helpdesk/agent-bots', { name: 'Bot', webhookUrl: url }] },
  { name: 'AI baseUrl', field: 'body.baseUrl', request: (url) => ['PUT', '/v3/helpdesk/ai-settings', { enabled: true, baseUrl: url, model: 'gpt-test' }] },
  { name: 'media url send', field: 'body.image.url', request: (url) => ['POST', `/v3/connections/${connectionId}/chats/messages`, { to: '5511955550004', image: { url } }] },
  {
    name: 'campaign webhook',
    field: 'body.webhook.url',
    request: (url) => ['POST', '/v3/campaigns', { name: 'C', connectionId, message: { text: 'Hi' }, audience: { numbers: ['+5511955550005'] }, pace: { messagesPerMinute: null }, webhook: { url } }],
  },
  {
    name: 'campaign media url',
    field: 'body.message.image.url',
    request: (url) => ['POST', '/v3/campaigns', { name: 'C', connectionId, message: { image: { url } }, audience: { numbers: ['+5511955550005'] }, pace: { messagesPerMinute: null } }],
  },
];

describe('a URL the policy refuses is a 400 naming the rule, wherever it is given', () => {
  for (const place of PLACES) {
    test(`${place.name}: loopback, [::1], 2130706433, 169.254.169.254, 10.0.0.1, *.internal`, async () => {
      for (const [url, rule] of REFUSED) {
        const [method, path, body] = place.request(url);
        const res = await service.call(method, path, { apikey: owner.token, body });
        expectStandardError(res, 400, 'Bad Request');
        expect(res.body.message).toHaveLength(1);
        expect(res.body.message[0]).toStartWith(`${place.field} is refused by the outbound policy: ${rule}`);
        expect(res.body.message[0]).toEndWith('see OUTBOUND_ALLOW');
      }
    });
  }

  test('a public URL is accepted as before', async () => {
    const res = await service.call('POST', '/v3/helpdesk/webhooks', { apikey: owner.token, body: { url: 'https://hooks.example.com/helpdesk', subscriptions: ['helpdesk.label.created'] } });
    expect(res.status).toBe(201);
  });
});

describe('a URL stored before the policy is refused again when called, and nothing is sent', () => {
  test('POST /v3/helpdesk/webhooks/{id}/test no longer tells an open port from a closed one', async () => {
    const created = await service.call('POST', '/v3/helpdesk/webhooks', { apikey: owner.token, body: { url: 'https://hooks.example.com/probe', subscriptions: ['helpdesk.label.created'] } });
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const closedPort = closed.port;
    closed.stop(true);
    const answers: unknown[] = [];
    for (const url of [receiverUrl('/open'), `http://127.0.0.1:${closedPort}/closed`]) {
      await db().updateTable('helpdesk_webhooks').set({ url }).where('id', '=', created.body.id).execute();
      const res = await service.call('POST', `/v3/helpdesk/webhooks/${created.body.id}/test`, { apikey: owner.token });
      expect(res.status).toBe(201);
      answers.push({ status: res.body.status, error: res.body.error });
    }
    const refused = { status: null, error: 'refused by the outbound policy: 127.0.0.0/8 (loopback) is not reachable from this service' };
    expect(answers).toEqual([refused, refused]);
    expect(hits).toHaveLength(0);
  });

  test('a connection webhook delivery to it is a failed attempt recording the refusal', async () => {
    const created = await service.call('POST', '/v3/webhooks', { apikey: owner.token, body: { url: 'https://hooks.example.com/conn', events: ['messages.upsert'], connections: [connectionId] } });
    expect(created.status).toBe(201);
    await db().updateTable('webhooks').set({ url: receiverUrl('/conn') }).where('id', '=', created.body.id).execute();
    await service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, { apikey: owner.token, body: { from: '5511955550009', text: 'hello' } });
    const attempt = await eventually(async () => {
      const res = await service.call('GET', `/v3/webhooks/${created.body.id}/deliveries`, { apikey: owner.token });
      return res.body.data?.[0]?.attemptLog?.[0];
    }, 'the first attempt');
    expect(attempt).toMatchObject({ statusCode: null, error: 'refused by the outbound policy: 127.0.0.0/8 (loopback) is not reachable from this service' });
    expect(hits).toHaveLength(0);
  });

  test('the AI baseUrl: a 502 saying it is refused, never the internal answer', async () => {
    expect((await service.call('PUT', '/v3/helpdesk/ai-settings', { apikey: owner.token, body: { enabled: true, baseUrl: 'https://ai.example.com/v1', model: 'gpt-test' } })).status).toBe(200);
    await db().updateTable('helpdesk_ai_settings').set({ base_url: receiverUrl('/v1') }).where('workspace_id', '=', owner.workspaceId).execute();
    await service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, { apikey: owner.token, body: { from: '5511955550010', text: 'lamp broken' } });
    const conversation = await eventually(async () => (await service.call('GET', '/v3/helpdesk/conversations', { apikey: owner.token })).body.data?.[0], 'a conversation');
    const res = await service.call('POST', `/v3/helpdesk/conversations/${conversation.id}/ai/suggest-reply`, { apikey: owner.token });
    expectStandardError(res, 502, 'Bad Gateway');
    expect(res.body.message).toContain('refused by the outbound policy: 127.0.0.0/8 (loopback)');
    expect(hits).toHaveLength(0);
  });
});
