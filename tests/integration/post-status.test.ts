import { beforeAll, describe, expect, test } from 'bun:test';
import { useTestService } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 20, item 8. Spec 7.1: "201 | Created; default for POST." Actions (rotate, connect,
 * disconnect, logout, the sandbox's simulated events) are POSTs and answer 201 like the others.
 * Where the spec or the protocol behind a path fixes 200, the path keeps it: OAuth token,
 * revoke ("200 for any input", spec 4.1) and introspect (RFC 6749, 7009, 7662), the MCP
 * endpoint (JSON-RPC over Streamable HTTP), the provider callback and the Flow data-exchange
 * endpoint (the network platform expects 200), and the frozen v2 API (spec 9).
 */
const KEEPS_200 = new Set(['/v3/oauth/token', '/v3/oauth/revoke', '/v3/oauth/introspect', '/v3/mcp', '/v3/webhooks/whatsapp/{connectionId}', '/v3/flows/data-exchange/{endpointId}']);

let apikey: string;

const service = useTestService();

beforeAll(async () => {
  apikey = (await service.bootstrap({ plan: 'PRO' })).token;
}, HOOK_TIMEOUT);

const post = (path: string, body?: unknown) => service.call('POST', path, { apikey, body });

describe('issue 20 §8: POST answers 201 (spec 7.1)', () => {
  test('POST /v3/webhooks/{id}/secret/rotate → 201 with the new secret', async () => {
    const webhook = await post('/v3/webhooks', { url: 'https://example.com/hook', events: ['messages.upsert'] });
    const rotated = await post(`/v3/webhooks/${webhook.body.id}/secret/rotate`);
    expect(rotated.status).toBe(201);
    expect(typeof rotated.body.secret).toBe('string');
  });

  test('connect, disconnect and logout → 201 with the connection', async () => {
    const connection = (await post('/v3/connections', { name: 'actions' })).body;
    for (const [action, status] of [
      ['connect', 'CONNECTED'],
      ['disconnect', 'DISCONNECTED'],
      ['logout', 'LOGGED_OUT'],
    ] as const) {
      const res = await post(`/v3/connections/${connection.id}/${action}`);
      expect({ action, status: res.status, state: res.body.status }).toEqual({ action, status: 201, state: status });
    }
  });

  test('the sandbox receipts, presence, edits and deletes → 201', async () => {
    const connection = (await post('/v3/connections', { name: 'sandbox' })).body;
    await post(`/v3/connections/${connection.id}/connect`);
    const incoming = await post(`/v3/connections/${connection.id}/sandbox/messages`, { from: '+5511977770000', text: 'hello' });
    expect(incoming.status).toBe(201);
    const sent = await post(`/v3/connections/${connection.id}/chats/messages`, { to: '+5511977770000', text: 'hi' });
    expect(sent.status).toBe(201);
    let receipt: { status: number } = { status: 0 };
    // The receipt needs the network id, which the worker sets when it hands the message over.
    for (let i = 0; i < 200 && receipt.status !== 201; i++) {
      receipt = await post(`/v3/connections/${connection.id}/sandbox/receipts`, { messageId: sent.body.id, status: 'DELIVERED' });
      if (receipt.status !== 201) await Bun.sleep(50);
    }
    expect(receipt.status).toBe(201);
    expect((await post(`/v3/connections/${connection.id}/sandbox/presence`, { from: '+5511977770000', presence: 'composing' })).status).toBe(201);
    const externalId = incoming.body.externalId ?? incoming.body.key?.id ?? incoming.body.id;
    expect((await post(`/v3/connections/${connection.id}/sandbox/edits`, { messageId: externalId, text: 'hello!' })).status).toBe(201);
    expect((await post(`/v3/connections/${connection.id}/sandbox/deletes`, { messageId: externalId })).status).toBe(201);
  });

  test('the OpenAPI document: every v3 POST answers 201, none 200, except the paths whose spec or protocol fixes 200', async () => {
    const doc = (await service.call('GET', '/docs/json')).body;
    const answering200: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      const responses = item.post?.responses;
      if (!responses || path.startsWith('/v2/') || KEEPS_200.has(path)) continue;
      if ('200' in responses) answering200.push(path);
    }
    expect(answering200).toEqual([]);
    for (const path of KEEPS_200) expect(Object.keys(doc.paths[path]?.post?.responses ?? {})).toContain('200');
  });
});
