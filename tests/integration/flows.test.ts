import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startGraphSimulator, type GraphSimulator } from '../support/graph-simulator.ts';
import { flowPlatform, teachFlows } from '../support/graph-simulator-flows.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';
import { generateFlowKeyPair } from '../../adapters/crypto/flow-encryption.ts';
import { verifyDelivery } from '../../core/webhooks/signature.ts';

/**
 * The `flows` plugin end to end on an official connection against the Graph simulator
 * (issue 9 items 3–5; spec 4.3 rows `flows`, `send-flow`, `flows-encryption`, "Flow kinds";
 * 6.1, 6.2, 8). Done when: "a data_exchange Flow is sent, two screens are answered by a local
 * webhook through the encrypted endpoint, and the submission arrives".
 */

let sim: GraphSimulator;
let simFlows: ReturnType<typeof teachFlows>;
let platform: ReturnType<typeof flowPlatform>;
let connectionId: string;
let callbackUrl: string;

/** The customer's local webhook for `flow.data_exchange`: what it received, and how it answers. */
const received: Array<{ body: any; verified: boolean }> = [];
let answer: (question: any) => Response | Promise<Response> = () => new Response('');
let hookServer: ReturnType<typeof Bun.serve>;
let hookSecret = '';

beforeAll(async () => {
  sim = await startGraphSimulator();
  simFlows = teachFlows(sim);
  platform = flowPlatform(sim, simFlows);
}, HOOK_TIMEOUT);

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  connectionId = await createOfficial('official');
  callbackUrl = `${service.url}/v3/webhooks/whatsapp/${connectionId}`;
  sim.callbackUrl = callbackUrl;
  expect((await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey: owner.token })).body.status).toBe('CONNECTED');

  hookServer = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const raw = await request.text();
      const verified = verifyDelivery(hookSecret, raw, { signature: request.headers.get('x-switchboard-signature-256'), timestamp: request.headers.get('x-switchboard-timestamp') }, Math.floor(Date.now() / 1000));
      const body = JSON.parse(raw);
      received.push({ body, verified });
      return answer(body);
    },
  });
  const hook = await service.call('POST', '/v3/webhooks', {
    apikey: owner.token,
    body: { url: `http://127.0.0.1:${hookServer.port}/flow`, events: ['flow.data_exchange', 'messages.upsert'], connections: [connectionId], hmacEnabled: true },
  });
  expect(hook.status).toBe(201);
  hookSecret = (await service.call('GET', `/v3/webhooks/${hook.body.id}/secret`, { apikey: owner.token })).body.secret;
  expect(typeof hookSecret).toBe('string');
}, HOOK_TIMEOUT);

/** A cloud-api connection of the simulator's number, with the customer's own credentials. */
async function createOfficial(name: string): Promise<string> {
  const created = await service.call('POST', '/v3/connections', {
    apikey: owner.token,
    body: {
      name,
      driver: 'cloud-api',
      credentials: { phoneNumberId: sim.phoneNumberId, businessAccountId: sim.businessAccountId, accessToken: sim.accessToken, appSecret: sim.appSecret, verifyToken: sim.verifyToken },
    },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

afterAll(async () => {
  hookServer?.stop(true);
  await sim?.stop();
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown) => service.call(method, `/v3/connections/${connectionId}${path}`, { apikey: owner.token, body });

const screen = (id: string, terminal = false) => ({
  id,
  title: id,
  ...(terminal ? { terminal: true } : {}),
  data: {},
  layout: { type: 'SingleColumnLayout', children: [{ type: 'Footer', label: 'Next', 'on-click-action': { name: terminal ? 'complete' : 'data_exchange', payload: {} } }] },
});
const navigateFlow = { version: '7.2', screens: [screen('WELCOME', true)] };
const dataExchangeFlow = {
  version: '7.2',
  data_api_version: '3.0',
  routing_model: { APPOINTMENT: ['DETAILS'], DETAILS: ['SUMMARY'], SUMMARY: [] },
  screens: [screen('APPOINTMENT'), screen('DETAILS'), screen('SUMMARY', true)],
};

let dataExchangeUrl = '';

describe('Flow encryption key (spec 4.3 flows-encryption)', () => {
  test('GET before provisioning: no key, no dataExchangeUrl', async () => {
    const res = await call('GET', '/flows-encryption');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ phoneNumberId: sim.phoneNumberId, registered: false, dataExchangeUrl: null });
  });

  test('a data_exchange Flow before the key is refused (422): its endpoint needs the key', async () => {
    const res = await call('POST', '/flows', { flowJson: dataExchangeFlow, publish: true });
    expect(res.status).toBe(422);
    expect(simFlows.flows.size).toBe(0);
  });

  test('PUT provisions an RSA-2048 pair and registers the public half with the platform; GET gives the dataExchangeUrl', async () => {
    const put = await call('PUT', '/flows-encryption');
    expect(put.status).toBe(200);
    expect(put.body.registered).toBe(true);
    expect(simFlows.publicKeys.get(sim.phoneNumberId)).toBe(put.body.publicKey);
    expect(sim.log).toContain(`POST /v23.0/${sim.phoneNumberId}/whatsapp_business_encryption`);
    const get = await call('GET', '/flows-encryption');
    expect(get.body.registered).toBe(true);
    expect(get.body.dataExchangeUrl).toStartWith(`${service.runtime.ctx.config.publicUrl}/v3/flows/data-exchange/`);
    dataExchangeUrl = get.body.dataExchangeUrl;
    // The private key is sealed at rest, never stored in the clear.
    const row = await service.runtime.ctx.db.selectFrom('flow_encryption_keys' as any).selectAll().executeTakeFirstOrThrow();
    expect(String((row as any).private_key)).not.toContain('PRIVATE KEY');
  });
});

describe('creating Flows (spec 4.3 flows, "Flow kinds")', () => {
  test('navigate: created, uploaded and published; no validation errors', async () => {
    const res = await call('POST', '/flows', { flowJson: navigateFlow, publish: true, name: 'welcome' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'navigate', status: 'PUBLISHED', validation_errors: [], endpointUri: null });
    expect(simFlows.flows.get(res.body.id)?.status).toBe('PUBLISHED');
  });

  test('flowJson as a string works too; the platform’s validation_errors come back and the Flow stays a draft', async () => {
    const broken = { version: '7.2', screens: [screen('ONLY')] }; // no terminal screen
    const res = await call('POST', '/flows', { flowJson: JSON.stringify(broken), publish: true, name: 'broken' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('DRAFT');
    expect(res.body.validation_errors).toEqual([expect.objectContaining({ error: 'MISSING_TERMINAL_SCREEN' })]);
    expect(simFlows.flows.get(res.body.id)?.status).toBe('DRAFT');
  });

  test('format problems are all reported at once (400) and nothing reaches the platform', async () => {
    const before = simFlows.flows.size;
    const res = await call('POST', '/flows', { flowJson: { version: 7, screens: [{ id: 'A1' }, screen('B')], data_api_version: '2.0', routing_model: { X: ['B'] } } });
    expect(res.status).toBe(400);
    const text = JSON.stringify(res.body.message);
    for (const field of ['flowJson.version', 'flowJson.screens.0.id', 'flowJson.screens.0.layout', 'data_api_version', 'routing_model.X']) expect(text).toContain(field);
    expect(simFlows.flows.size).toBe(before);
  });

  test('data_exchange: endpointUri other than the dataExchangeUrl is refused; left out, it is set to it', async () => {
    expect((await call('POST', '/flows', { flowJson: dataExchangeFlow, endpointUri: 'https://elsewhere.example/flow' })).status).toBe(400);
    const res = await call('POST', '/flows', { flowJson: dataExchangeFlow, publish: true, name: 'booking' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'data_exchange', status: 'PUBLISHED', endpointUri: dataExchangeUrl });
    expect(simFlows.flows.get(res.body.id)?.endpointUri).toBe(dataExchangeUrl);
  });
});

describe('the data-exchange endpoint (spec 6.2; issue 9 item 4)', () => {
  test('ping is answered by the service, encrypted, base64 text/plain', async () => {
    const before = received.length;
    const res = await platform.call(dataExchangeUrl, { version: '3.0', action: 'ping' });
    expect(res.status).toBe(200);
    expect(res.contentType).toContain('text/plain');
    expect(res.answer).toEqual({ data: { status: 'active' } });
    expect(received.length).toBe(before);
  });

  test('a request encrypted with another key is 421 (the platform refreshes the key)', async () => {
    const res = await platform.call(dataExchangeUrl, { version: '3.0', action: 'ping' }, { publicKeyPem: generateFlowKeyPair().publicKeyPem });
    expect(res.status).toBe(421);
  });

  test('a request not signed with the app secret is 432', async () => {
    const res = await platform.call(dataExchangeUrl, { version: '3.0', action: 'ping' }, { appSecret: 'not-the-secret' });
    expect(res.status).toBe(432);
  });

  test('a bare 200 from the customer becomes the current screen with error_message, not a broken form', async () => {
    answer = () => new Response('', { status: 200 });
    const res = await platform.call(dataExchangeUrl, { version: '3.0', action: 'data_exchange', screen: 'DETAILS', data: { a: 1 }, flow_token: 'flow_x' });
    expect(res.status).toBe(200);
    expect(res.answer).toEqual({ screen: 'DETAILS', data: { error_message: expect.stringContaining('bare 200') } });
  });

  test('a non-object answer on the first request (no current screen) is an HTTP error, never an encrypted non-answer', async () => {
    answer = () => Response.json([1, 2, 3]);
    const res = await platform.call(dataExchangeUrl, { version: '3.0', action: 'INIT', flow_token: 'flow_x' });
    expect(res.status).toBe(502);
  });
});

describe('a data_exchange Flow end to end (issue 9 "Done when")', () => {
  test('sent, two screens answered by the local webhook through the encrypted endpoint, the submission arrives with the flowToken', async () => {
    const flowId = [...simFlows.flows.values()].find((f) => f.name === 'booking')!.id;
    const contact = '447911123456';
    // The contact opens the 24-hour window (spec 3.4).
    expect((await sim.deliverIncoming(callbackUrl, { from: contact, type: 'text', text: { body: 'book me' } })).status).toBe(200);

    const sent = await call('POST', '/chats/messages/send-flow', { to: contact, header: 'Booking', body: 'Book a visit', cta: 'Book', flowId, flowAction: 'data_exchange' });
    expect(sent.status).toBe(201);
    // Spec 4.3: "if `flowToken` omitted one of shape `<prefix>_<uuid>` is generated and returned".
    expect(sent.body.flowToken).toMatch(/^[a-z]+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const flowToken = sent.body.flowToken;
    const deadline = Date.now() + 20_000;
    while (!sim.sent.some((m) => m.body.interactive?.action?.parameters?.flow_token === flowToken) && Date.now() < deadline) await Bun.sleep(50);
    const out = sim.sent.find((m) => m.body.interactive?.action?.parameters?.flow_token === flowToken)!;
    expect(out.body.interactive).toMatchObject({ type: 'flow', body: { text: 'Book a visit' }, action: { name: 'flow', parameters: { flow_id: flowId, flow_cta: 'Book', flow_action: 'data_exchange' } } });

    // The local webhook routes the screens.
    answer = (q) => {
      if (q.action === 'INIT') return Response.json({ screen: 'APPOINTMENT', data: { slots: ['9:00', '10:00'] } });
      if (q.screen === 'APPOINTMENT') return Response.json({ screen: 'DETAILS', data: { slot: q.data.slot } });
      return Response.json({ screen: 'SUMMARY', data: { confirmed: true } });
    };
    const before = received.length;
    const first = await platform.call(dataExchangeUrl, { version: '3.0', action: 'INIT', flow_token: flowToken });
    expect(first.answer).toEqual({ screen: 'APPOINTMENT', data: { slots: ['9:00', '10:00'] } });
    const second = await platform.call(dataExchangeUrl, { version: '3.0', action: 'data_exchange', screen: 'APPOINTMENT', data: { slot: '10:00' }, flow_token: flowToken });
    expect(second.answer).toEqual({ screen: 'DETAILS', data: { slot: '10:00' } });
    // Spec 6.2: the question the webhook gets, plain JSON, signed like deliveries (the same hook
    // also takes messages.upsert, whose deliveries may arrive meanwhile).
    const questions = received.slice(before).filter((q) => q.body.action !== undefined);
    expect(questions).toHaveLength(2);
    expect(questions.every((q) => q.verified)).toBe(true);
    expect(questions[1]!.body).toMatchObject({ action: 'data_exchange', screen: 'APPOINTMENT', data: { slot: '10:00' }, flow_token: flowToken, connectionId });

    // The submission (spec 6.1): messages.upsert, interactiveResponseMessage, paramsJson holding the flow_token.
    const response = { flow_token: flowToken, slot: '10:00', confirmed: true };
    const submitted = await sim.deliverIncoming(callbackUrl, {
      from: contact,
      type: 'interactive',
      context: { from: sim.phoneNumberId, id: out.id },
      interactive: { type: 'nfm_reply', nfm_reply: { name: 'flow', body: 'Sent', response_json: JSON.stringify(response) } },
    });
    expect(submitted.status).toBe(200);
    const rows = await service.runtime.ctx.db.selectFrom('events').selectAll().where('connection_id', '=', connectionId).where('event', '=', 'messages.upsert').execute();
    const upserts = rows.map((r) => (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload)) as any[];
    const submission = upserts.map((p) => p.data ?? p).find((d) => d.messageType === 'interactiveResponseMessage');
    expect(submission).toBeDefined();
    const params = JSON.parse(submission.message.interactiveResponseMessage.nativeFlowResponseMessage.paramsJson);
    expect(params).toEqual(response);
  });

  test('send-flow generates a token only when none is given, and navigate needs its first screen', async () => {
    const flowId = [...simFlows.flows.values()].find((f) => f.name === 'welcome')!.id;
    const contact = '447911123457';
    await sim.deliverIncoming(callbackUrl, { from: contact, type: 'text', text: { body: 'hi' } });
    const mine = await call('POST', '/chats/messages/send-flow', { to: contact, body: 'Hi', cta: 'Open', flowId, screen: 'WELCOME', flowToken: 'order-42' });
    expect(mine.status).toBe(201);
    expect(mine.body.flowToken).toBe('order-42');
    const noScreen = await call('POST', '/chats/messages/send-flow', { to: contact, body: 'Hi', cta: 'Open', flowId, flowAction: 'navigate' });
    expect(noScreen.status).toBe(400);
  });
});

describe('unofficial connections (spec 4.3: "a Flow is refused")', () => {
  test('send-flow, flows and flows-encryption are 422 on a sandbox connection', async () => {
    const sandbox = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'sandbox' } });
    expect(sandbox.status).toBe(201);
    const id = sandbox.body.id;
    await service.call('POST', `/v3/connections/${id}/connect`, { apikey: owner.token });
    const on = (method: string, path: string, body?: unknown) => service.call(method, `/v3/connections/${id}${path}`, { apikey: owner.token, body });
    expect((await on('POST', '/chats/messages/send-flow', { to: '447911123458', body: 'Hi', cta: 'Open', flowId: '123', screen: 'A' })).status).toBe(422);
    expect((await on('POST', '/flows', { flowJson: navigateFlow })).status).toBe(422);
    expect((await on('PUT', '/flows-encryption')).status).toBe(422);
  });
});

describe('the key belongs to the phone number (spec 4.3: "survives deletion of the connection")', () => {
  test('after deleting the connection, a new connection of the same number finds the same key and dataExchangeUrl', async () => {
    const before = (await call('GET', '/flows-encryption')).body;
    expect((await service.call('DELETE', `/v3/connections/${connectionId}`, { apikey: owner.token })).status).toBeLessThan(300);
    const again = await createOfficial('official again');
    const found = await service.call('GET', `/v3/connections/${again}/flows-encryption`, { apikey: owner.token });
    expect(found.body).toMatchObject({ registered: true, publicKey: before.publicKey, dataExchangeUrl: before.dataExchangeUrl });
    // The platform still reaches the endpoint with the key it holds.
    expect((await platform.call(before.dataExchangeUrl, { version: '3.0', action: 'ping' })).answer).toEqual({ data: { status: 'active' } });
  });

  test('another workspace taking the number never sees or reuses the first workspace’s key: its PUT makes a new pair and endpoint', async () => {
    const listed = await service.call('GET', '/v3/connections', { apikey: owner.token });
    const official = (listed.body.data ?? listed.body).find((c: any) => c.driver === 'cloud-api');
    const mine = await service.call('GET', `/v3/connections/${official.id}/flows-encryption`, { apikey: owner.token });
    expect(mine.body.registered).toBe(true);
    // One connection per official number: the first workspace lets it go.
    expect((await service.call('DELETE', `/v3/connections/${official.id}`, { apikey: owner.token })).status).toBeLessThan(300);
    const other = await service.bootstrap({ email: 'other-owner@example.com', workspace: 'Other', plan: 'PRO' });
    const created = await service.call('POST', '/v3/connections', {
      apikey: other.token,
      body: {
        name: 'same number',
        driver: 'cloud-api',
        credentials: { phoneNumberId: sim.phoneNumberId, businessAccountId: sim.businessAccountId, accessToken: sim.accessToken, appSecret: sim.appSecret, verifyToken: sim.verifyToken },
      },
    });
    expect(created.status).toBe(201);
    const theirs = (path: string, method = 'GET') => service.call(method, `/v3/connections/${created.body.id}${path}`, { apikey: other.token });
    expect((await theirs('/flows-encryption')).body).toMatchObject({ registered: false, dataExchangeUrl: null, publicKey: null });
    const provisioned = await theirs('/flows-encryption', 'PUT');
    expect(provisioned.status).toBe(200);
    expect(provisioned.body.publicKey).not.toBe(mine.body.publicKey);
    expect(provisioned.body.dataExchangeUrl).not.toBe(mine.body.dataExchangeUrl);
    // The old endpoint is gone with the old key: the platform now holds the new public key.
    expect((await platform.call(provisioned.body.dataExchangeUrl, { version: '3.0', action: 'ping' })).answer).toEqual({ data: { status: 'active' } });
  });
});
