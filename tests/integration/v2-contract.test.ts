import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startGraphSimulator, type GraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates } from '../support/graph-simulator-templates.ts';
import { connectedConnection, eventually } from '../support/helpdesk.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Contract of the frozen v2 interface (issue 10: "Contract tests that pin every v2 response
 * shape … that fails on any added or removed field"; spec 9: "frozen: bug fixes only, no new
 * fields"). Every endpoint runs on the sandbox and on cloud-api (against the Graph simulator),
 * and its answer's fields are compared with the pinned list below — and with the OpenAPI
 * document, so the documented shape is the served one.
 *
 * Changing a list here changes the v2 contract: it must not happen.
 */
const PINNED = {
  connection: ['id', 'name', 'phoneNumber', 'status'],
  chat: ['lastMessageAt', 'name', 'remoteJid'],
  page: ['currentPage', 'data', 'perPage', 'total', 'totalPages'],
  message: ['content', 'fromMe', 'id', 'remoteJid', 'status', 'timestamp', 'type'],
  presence: ['presence'],
  template: ['category', 'components', 'id', 'language', 'name', 'status'],
  verification: ['connectionId', 'exists', 'jid', 'phone'],
  error: ['error', 'message', 'statusCode'],
} as const;

let sim: GraphSimulator;
let openapi: any;
const on: Record<'sandbox' | 'cloud-api', { id: string; chat: string }> = { sandbox: { id: '', chat: '5511966660001' }, 'cloud-api': { id: '', chat: '447700900601' } };

beforeAll(async () => {
  sim = await startGraphSimulator();
  teachTemplates(sim);
}, HOOK_TIMEOUT);

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  on.sandbox.id = await connectedConnection(service, owner.token, 'contract sandbox');
  const official = await officialConnection(service, sim, owner.token, 'contract official');
  on['cloud-api'].id = official.connectionId;
  // Each chat gets one incoming image, so history and media have something of both directions.
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
  await service.call('POST', `/v3/connections/${on.sandbox.id}/sandbox/messages`, {
    apikey: owner.token,
    body: { from: on.sandbox.chat, type: 'imageMessage', media: { base64: Buffer.from(png).toString('base64'), mimetype: 'image/png' } },
  });
  await sim.deliverIncoming(official.callbackUrl, { from: on['cloud-api'].chat, type: 'image', image: { id: sim.addMedia(png, 'image/png'), mime_type: 'image/png' } });
  openapi = (await service.call('GET', '/docs/json')).body;
}, HOOK_TIMEOUT);

afterAll(async () => {
  await sim?.stop();
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });
const fields = (value: unknown) => Object.keys(value as object).sort();

/** The fields the OpenAPI document gives a response (following `$ref`s and page envelopes' items). */
function documented(path: string, method: string, status: number, item = false): string[] {
  const operation = openapi.paths[path]?.[method];
  expect(operation?.tags).toContain('v2');
  let schema = operation.responses[String(status)].content['application/json'].schema;
  const resolve = (s: any) => (s?.$ref ? openapi.components.schemas[s.$ref.split('/').pop()] : s);
  schema = resolve(schema);
  if (schema.type === 'array') schema = resolve(schema.items);
  if (item) schema = resolve(schema.properties.data.items);
  return Object.keys(schema.properties).sort();
}

for (const driver of ['sandbox', 'cloud-api'] as const) {
  describe(`v2 contract on ${driver}`, () => {
    const base = () => `/v2/connections/${on[driver].id}`;
    const chat = () => on[driver].chat;

    test('GET /v2/connections and GET /v2/connections/{id}', async () => {
      const list = await call('GET', '/v2/connections');
      expect(list.status).toBe(200);
      for (const item of list.body) expect(fields(item)).toEqual([...PINNED.connection]);
      expect(documented('/v2/connections', 'get', 200)).toEqual([...PINNED.connection]);
      const one = await call('GET', base());
      expect(fields(one.body)).toEqual([...PINNED.connection]);
      expect(documented('/v2/connections/{id}', 'get', 200)).toEqual([...PINNED.connection]);
    });

    test('GET /v2/connections/{id}/chats', async () => {
      const res = await call('GET', `${base()}/chats`);
      expect(res.status).toBe(200);
      expect(fields(res.body)).toEqual([...PINNED.page]);
      expect(res.body.data.length).toBeGreaterThan(0);
      for (const item of res.body.data) expect(fields(item)).toEqual([...PINNED.chat]);
      expect(documented('/v2/connections/{id}/chats', 'get', 200)).toEqual([...PINNED.page]);
      expect(documented('/v2/connections/{id}/chats', 'get', 200, true)).toEqual([...PINNED.chat]);
    });

    test('POST /v2/connections/{id}/chats/{remoteJid}/presence', async () => {
      const res = await call('POST', `${base()}/chats/${chat()}/presence`, { presence: 'composing' });
      expect(res.status).toBe(202);
      expect(fields(res.body)).toEqual([...PINNED.presence]);
      expect(documented('/v2/connections/{id}/chats/{remoteJid}/presence', 'post', 202)).toEqual([...PINNED.presence]);
    });

    test('POST and GET /v2/connections/{id}/chats/{remoteJid}/messages', async () => {
      const sent = await call('POST', `${base()}/chats/${chat()}/messages`, { text: 'contract' });
      expect(sent.status).toBe(201);
      expect(fields(sent.body)).toEqual([...PINNED.message]);
      expect(documented('/v2/connections/{id}/chats/{remoteJid}/messages', 'post', 201)).toEqual([...PINNED.message]);
      const history = await eventually(async () => {
        const res = await call('GET', `${base()}/chats/${chat()}/messages`);
        return res.body.length >= 2 ? res : undefined;
      }, 'both directions in history');
      for (const item of history.body) expect(fields(item)).toEqual([...PINNED.message]);
      expect(documented('/v2/connections/{id}/chats/{remoteJid}/messages', 'get', 200)).toEqual([...PINNED.message]);
    });

    test('GET /v2/connections/{id}/chats/{remoteJid}/messages/{messageId}/media: the bytes and their headers', async () => {
      const history = (await call('GET', `${base()}/chats/${chat()}/messages`)).body;
      const image = history.find((m: any) => m.type === 'imageMessage');
      const res = await fetch(`${service.url}${base()}/chats/${chat()}/messages/${image.id}/media`, { headers: { apikey: owner.token } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(Number(res.headers.get('content-length'))).toBe((await res.arrayBuffer()).byteLength);
      expect(openapi.paths['/v2/connections/{id}/chats/{remoteJid}/messages/{messageId}/media']?.get?.tags).toContain('v2');
    });

    test('POST /v2/connections/{id}/verifications and POST /v2/verifications', async () => {
      const res = await call('POST', `${base()}/verifications`, { phone: '5511966660009' });
      if (driver === 'sandbox') {
        expect(res.status).toBe(200);
        expect(fields(res.body)).toEqual([...PINNED.verification]);
      } else {
        // The official network offers no lookup: the standard error.
        expect(res.status).toBe(422);
        expect(fields(res.body)).toEqual([...PINNED.error]);
      }
      expect(documented('/v2/connections/{id}/verifications', 'post', 200)).toEqual([...PINNED.verification]);
      const standalone = await call('POST', '/v2/verifications', { phone: '5511966660009' });
      expect(fields(standalone.body)).toEqual([...PINNED.verification]);
      expect(documented('/v2/verifications', 'post', 200)).toEqual([...PINNED.verification]);
    });

    test('GET and POST /v2/connections/{id}/templates', async () => {
      const definition = { name: `contract_${driver.replace('-', '_')}_${Date.now() % 100_000}`, language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi' }] };
      const created = await call('POST', `${base()}/templates`, definition);
      const list = await call('GET', `${base()}/templates`);
      if (driver === 'cloud-api') {
        expect(created.status).toBe(201);
        expect(fields(created.body)).toEqual([...PINNED.template]);
        expect(list.status).toBe(200);
        expect(fields(list.body)).toEqual([...PINNED.page]);
        expect(list.body.data.length).toBeGreaterThan(0);
        for (const item of list.body.data) expect(fields(item)).toEqual([...PINNED.template]);
      } else {
        // Templates exist only on official connections: the standard error, as on v3.
        expect([created.status, list.status]).toEqual([422, 422]);
        expect(fields(created.body)).toEqual([...PINNED.error]);
      }
      expect(documented('/v2/connections/{id}/templates', 'post', 201)).toEqual([...PINNED.template]);
      expect(documented('/v2/connections/{id}/templates', 'get', 200, true)).toEqual([...PINNED.template]);
    });
  });
}

test('the OpenAPI document lists exactly the v2 endpoints of spec 9, all under the v2 tag', () => {
  const v2 = Object.entries(openapi.paths as Record<string, Record<string, any>>)
    .filter(([path]) => path.startsWith('/v2/'))
    .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
  expect(v2).toEqual(
    [
      'GET /v2/connections',
      'GET /v2/connections/{id}',
      'GET /v2/connections/{id}/chats',
      'POST /v2/connections/{id}/chats/{remoteJid}/presence',
      'POST /v2/connections/{id}/chats/{remoteJid}/messages',
      'GET /v2/connections/{id}/chats/{remoteJid}/messages',
      'GET /v2/connections/{id}/chats/{remoteJid}/messages/{messageId}/media',
      'GET /v2/connections/{id}/templates',
      'POST /v2/connections/{id}/templates',
      'POST /v2/connections/{id}/verifications',
      'POST /v2/verifications',
    ].sort(),
  );
});

describe('PLUGINS without v2', () => {
  const bare = useTestService({ env: { PLUGINS: 'campaigns' } });

  test('the v2 routes answer 404 and leave the OpenAPI document; v3 is untouched', async () => {
    const someone = await bare.bootstrap({ plan: 'PRO' });
    expect((await bare.call('GET', '/v2/connections', { apikey: someone.token })).status).toBe(404);
    expect((await bare.call('GET', '/v3/connections', { apikey: someone.token })).status).toBe(200);
    const paths = Object.keys((await bare.call('GET', '/docs/json')).body.paths);
    expect(paths.filter((p) => p.startsWith('/v2/'))).toEqual([]);
  });
});
