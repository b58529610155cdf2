import { beforeAll, describe, expect, test } from 'bun:test';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { officialConnection } from '../support/official-connection.ts';
import { eventually } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Campaigns on an official (cloud-api) connection against the Graph API simulator (issue 8 item
 * 1: "a template on official connections, required outside the 24-hour window"; "the network's
 * per-number throughput ceiling for official ones"; spec 5.4 "official campaigns require a paid
 * plan").
 */
let connectionId: string;
let callbackUrl: string;

const sim = useGraphSimulator({ displayPhoneNumber: '+1 555-010-4478' });

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl, CAMPAIGN_PACER_MAX_SLEEP_SECONDS: '1' } }));
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  ({ connectionId, callbackUrl } = await officialConnection(service, sim, owner.token));
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });
const finished = (id: string) =>
  eventually(async () => {
    const c = (await call('GET', `/v3/campaigns/${id}`)).body;
    return c.status === 'COMPLETED' ? c : undefined;
  }, 'the campaign to complete');

describe('an official connection', () => {
  test('free text reaches only contacts inside their 24-hour window; the others are skipped and their credits given back', async () => {
    const writer = '447900100001';
    const silent = '447900100002';
    expect((await sim.deliverIncoming(callbackUrl, { from: writer, name: 'Wes', type: 'text', text: { body: 'hi' } })).status).toBe(200);
    await eventually(async () => ((await call('GET', `/v3/connections/${connectionId}/chats`)).body.data?.length ? true : undefined), 'the chat to exist');

    const created = await call('POST', '/v3/campaigns', { name: 'Free text', connectionId, message: { text: 'Thanks for writing' }, audience: { numbers: [`+${writer}`, `+${silent}`] } });
    expect(created.status).toBe(201);
    // The network's per-number ceiling is the default (and the cap) on official numbers.
    expect(created.body.pace).toEqual({ messagesPerMinute: 4800, jitterSeconds: 0, quietHours: null });
    const done = await finished(created.body.id);
    expect(done.progress).toMatchObject({ sent: 1, skipped: 1 });
    expect(done.credits).toEqual({ reserved: 2, consumed: 1, refunded: 1, held: 0 });
    const skipped = (await call('GET', `/v3/campaigns/${created.body.id}/recipients?status=SKIPPED`)).body.data;
    expect(skipped.map((r: any) => r.phone)).toEqual([silent]);
    expect(skipped[0].error).toContain('24-hour window');
    expect(sim.sent.filter((m) => m.waId === silent)).toHaveLength(0);
  }, 60_000);

  test('a template reaches everyone, with each recipient\'s variables in its parameters', async () => {
    const numbers = ['447900200001', '447900200002'];
    const created = await call('POST', '/v3/campaigns', {
      name: 'Template',
      connectionId,
      message: { template: { name: 'order_update', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: '{{name}}' }] }] } },
      audience: { recipients: numbers.map((phone, i) => ({ phone: `+${phone}`, variables: { name: `Client ${i}` } })) },
      pace: { messagesPerMinute: null },
    });
    expect(created.status).toBe(201);
    expect(created.body.pace.messagesPerMinute).toBe(4800);
    const done = await finished(created.body.id);
    expect(done.progress.sent).toBe(2);
    for (const [i, phone] of numbers.entries()) {
      const body = sim.sent.find((m) => m.waId === phone)?.body as any;
      expect(body.type).toBe('template');
      expect(JSON.stringify(body.template)).toContain(`Client ${i}`);
    }
  }, 60_000);

  test('a workspace back on the free plan cannot run an official campaign (spec 5.4)', async () => {
    const db = service.runtime.ctx.db;
    await db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', owner.workspaceId).execute();
    try {
      const refused = await call('POST', '/v3/campaigns', { name: 'x', connectionId, message: { text: 'x' }, audience: { numbers: ['+447900300001'] } });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toBe('USER_PLAN_OFFICIAL_CONNECTIONS');
    } finally {
      await db.updateTable('workspaces').set({ plan: 'PRO' }).where('id', '=', owner.workspaceId).execute();
    }
  });
});
